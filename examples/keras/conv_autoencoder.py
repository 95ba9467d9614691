"""A convolutional autoencoder of the 8x8 digits (keras.io's autoencoder example, as a
Sequential stack)."""

import numpy as np
from sklearn.datasets import load_digits

import rustyml.keras as keras
from rustyml.keras import layers

keras.utils.set_random_seed(4)
x = (load_digits().data / 16.0).astype("float32").reshape(-1, 8, 8, 1)
x_train, x_test = x[:1400], x[1400:]

autoencoder = keras.Sequential(
    [
        keras.Input(shape=(8, 8, 1)),
        layers.Conv2D(16, (3, 3), activation="relu", padding="same"),
        layers.MaxPooling2D((2, 2), padding="same"),
        layers.Conv2D(8, (3, 3), activation="relu", padding="same"),
        layers.Conv2DTranspose(8, (3, 3), strides=2, activation="relu", padding="same"),
        layers.Conv2D(1, (3, 3), activation="sigmoid", padding="same"),
    ]
)
autoencoder.compile(optimizer="adam", loss="binary_crossentropy")
autoencoder.fit(x_train, x_train, epochs=10, batch_size=64, shuffle=True, verbose=0)
reconstructed = autoencoder.predict(x_test, verbose=0)
mse = float(np.mean((reconstructed - x_test) ** 2))
print(f"RESULT mse={mse:.4f}")
