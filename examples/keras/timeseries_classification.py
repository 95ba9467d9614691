"""Classify univariate series with a fully convolutional network (the model of keras.io's
"timeseries classification from scratch", as a Sequential stack, on synthetic series: a
sine burst against noise)."""

import numpy as np

import rustyml.keras as keras
from rustyml.keras import layers

keras.utils.set_random_seed(6)
rng = np.random.default_rng(0)
n, length = 800, 96
y = rng.integers(0, 2, n)
t = np.arange(length)
x = 0.5 * rng.standard_normal((n, length))
starts = rng.integers(0, length - 32, n)
for i in np.flatnonzero(y):
    x[i, starts[i] : starts[i] + 32] += 1.0 + np.sin(0.8 * t[:32])
x = x[..., None].astype("float32")
x_train, y_train, x_test, y_test = x[:600], y[:600], x[600:], y[600:]

model = keras.Sequential(
    [
        keras.Input(shape=(length, 1)),
        layers.Conv1D(filters=16, kernel_size=3, padding="same"),
        layers.BatchNormalization(),
        layers.ReLU(),
        layers.Conv1D(filters=16, kernel_size=3, padding="same"),
        layers.BatchNormalization(),
        layers.ReLU(),
        layers.GlobalAveragePooling1D(),
        layers.Dense(2, activation="softmax"),
    ]
)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=15, validation_split=0.2, verbose=0)
test_loss, test_acc = model.evaluate(x_test, y_test, verbose=0)
print("Test accuracy", test_acc)
print("Test loss", test_loss)
print(f"RESULT accuracy={test_acc:.4f}")
