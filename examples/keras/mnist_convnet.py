"""A small convnet on the 8x8 digits (the shape of keras.io's MNIST convnet example)."""

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import rustyml.keras as keras
from rustyml.keras import layers

keras.utils.set_random_seed(0)
num_classes = 10
input_shape = (8, 8, 1)

x, y = load_digits(return_X_y=True)
x = (x / 16.0).astype("float32").reshape(-1, 8, 8, 1)
x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, random_state=0)
y_train = keras.utils.to_categorical(y_train, num_classes)
y_test = keras.utils.to_categorical(y_test, num_classes)

model = keras.Sequential(
    [
        keras.Input(shape=input_shape),
        layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(num_classes, activation="softmax"),
    ]
)
model.summary()
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=15, validation_split=0.1, verbose=0)
score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
print(f"RESULT accuracy={score[1]:.4f}")
assert np.isfinite(score[0])
