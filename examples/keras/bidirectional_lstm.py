"""Classify integer sequences with Embedding + Bidirectional(LSTM) (keras.io's IMDB
example, on synthetic sequences: the label says whether token 7 occurs more than token 3)."""

import numpy as np

import rustyml.keras as keras
from rustyml.keras import layers

keras.utils.set_random_seed(3)
max_features = 20
maxlen = 40
rng = np.random.default_rng(0)
lengths = rng.integers(10, 60, 1600)
sequences = [rng.integers(1, max_features, n) for n in lengths]
labels = np.array([(s == 7).sum() > (s == 3).sum() for s in sequences], dtype="float32")
x = keras.utils.pad_sequences(sequences, maxlen=maxlen)
x_train, y_train, x_val, y_val = x[:1200], labels[:1200], x[1200:], labels[1200:]

model = keras.Sequential(
    [
        keras.Input(shape=(maxlen,)),
        layers.Embedding(max_features, 16),
        layers.Bidirectional(layers.LSTM(16)),
        layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=8, validation_data=(x_val, y_val), verbose=0)
loss, accuracy = model.evaluate(x_val, y_val, verbose=0)
print(f"RESULT accuracy={accuracy:.4f}")
