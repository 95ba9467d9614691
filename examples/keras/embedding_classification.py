"""Classify token sequences with an Embedding and global average pooling (the bag-of-
embeddings text classifier of keras.io's text examples, on synthetic token data: positive
sequences draw more often from the upper half of the vocabulary)."""

import numpy as np

import rustyml.keras as keras
from rustyml.keras import layers

keras.utils.set_random_seed(7)
vocab_size, sequence_length = 200, 30
rng = np.random.default_rng(0)
labels = rng.integers(0, 2, 2000)
sequences = []
for label in labels:
    n = rng.integers(8, 45)
    weights = (
        np.linspace(1.0, 1.6, vocab_size - 1) if label else np.linspace(1.6, 1.0, vocab_size - 1)
    )
    sequences.append(rng.choice(np.arange(1, vocab_size), size=n, p=weights / weights.sum()))
x = keras.utils.pad_sequences(sequences, maxlen=sequence_length, padding="post")
x_train, y_train, x_test, y_test = x[:1600], labels[:1600], x[1600:], labels[1600:]

model = keras.Sequential(
    [
        keras.Input(shape=(sequence_length,)),
        layers.Embedding(vocab_size, 16),
        layers.GlobalAveragePooling1D(),
        layers.Dense(16, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(x_train, y_train, validation_split=0.1, epochs=10, batch_size=32, verbose=0)
loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
print(f"RESULT accuracy={accuracy:.4f}")
