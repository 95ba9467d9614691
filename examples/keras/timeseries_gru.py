"""Forecast the next value of a noisy sine series with a GRU (keras.io's forecasting
examples, on a synthetic series)."""

import numpy as np

import rustyml.keras as keras
from rustyml.keras import layers

keras.utils.set_random_seed(2)
rng = np.random.default_rng(0)
t = np.arange(3000, dtype="float32")
series = np.sin(0.07 * t) + 0.1 * rng.standard_normal(t.shape).astype("float32")

window = 24
starts = np.arange(len(series) - window)
x = np.stack([series[s : s + window] for s in starts])[..., None].astype("float32")
y = series[starts + window][:, None].astype("float32")
split = int(0.8 * len(x))

model = keras.Sequential(
    [
        keras.Input(shape=(window, 1)),
        layers.GRU(32),
        layers.Dense(1),
    ]
)
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.005), loss="mse", metrics=["mae"])
model.fit(
    x[:split], y[:split], batch_size=64, epochs=5, validation_data=(x[split:], y[split:]), verbose=0
)
loss, mae = model.evaluate(x[split:], y[split:], verbose=0)
print(f"RESULT mae={mae:.4f}")
