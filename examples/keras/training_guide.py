"""fit / evaluate / predict with validation data and early stopping (the ground of keras.io's
training and evaluation guide, on the digits)."""

import numpy as np
from sklearn.datasets import load_digits

import rustyml.keras as keras
from rustyml.keras import layers

keras.utils.set_random_seed(5)
x, y = load_digits(return_X_y=True)
x = (x / 16.0).astype("float32")
x_train, y_train = x[:1200], y[:1200]
x_val, y_val = x[1200:1500], y[1200:1500]
x_test, y_test = x[1500:], y[1500:]

model = keras.Sequential(
    [
        keras.Input(shape=(64,)),
        layers.Dense(64, activation="relu", name="dense_1"),
        layers.Dense(64, activation="relu", name="dense_2"),
        layers.Dense(10, activation="softmax", name="predictions"),
    ]
)
model.compile(
    optimizer=keras.optimizers.RMSprop(),
    loss=keras.losses.SparseCategoricalCrossentropy(),
    metrics=["accuracy"],
)
history = model.fit(
    x_train,
    y_train,
    batch_size=64,
    epochs=30,
    validation_data=(x_val, y_val),
    callbacks=[
        keras.callbacks.EarlyStopping(monitor="val_loss", patience=3, restore_best_weights=True)
    ],
    verbose=0,
)
print("epochs run:", len(history.history["loss"]))
results = model.evaluate(x_test, y_test, batch_size=128, verbose=0)
print("test loss, test acc:", results)
predictions = model.predict(x_test[:3], verbose=0)
print("predictions shape:", predictions.shape)
assert np.allclose(predictions.sum(axis=1), 1.0, atol=1e-5)
print(f"RESULT accuracy={results[1]:.4f}")
