"""Building Sequential models (the ground the keras.io Sequential guide covers)."""

import numpy as np

import rustyml.keras as keras
from rustyml.keras import layers

keras.utils.set_random_seed(1)

# A stack of layers given as a list...
model = keras.Sequential(
    [
        layers.Dense(2, activation="relu", name="layer1"),
        layers.Dense(3, activation="relu", name="layer2"),
        layers.Dense(4, name="layer3"),
    ]
)
x = np.ones((3, 3), dtype="float32")
y = model(x)
print("output shape:", y.shape)
print("layers:", [layer.name for layer in model.layers])

# ... or added one by one, and the last one popped again.
model = keras.Sequential(name="incremental")
model.add(keras.Input(shape=(4,)))
model.add(layers.Dense(2, activation="relu"))
model.add(layers.Dense(3, activation="relu"))
model.add(layers.Dense(4))
model.pop()
print("after pop:", len(model.layers), "layers")
model.summary()

# Train the stack on a regression target.
rng = np.random.default_rng(0)
features = rng.standard_normal((512, 4)).astype("float32")
target = (features @ np.array([1.0, -2.0, 0.5, 3.0], dtype="float32"))[:, None]
model.add(layers.Dense(1))
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01), loss="mse")
history = model.fit(features, target, batch_size=32, epochs=40, verbose=0)
final = history.history["loss"][-1]
print(f"RESULT loss={final:.4f}")
