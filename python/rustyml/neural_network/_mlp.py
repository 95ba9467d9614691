"""scikit-learn estimators over ``Sequential``: an MLP that fits into ``Pipeline`` and
``GridSearchCV``. Hyper-parameter names follow scikit-learn's ``MLPClassifier``."""

import numpy as np

from rustyml._base import BaseEstimator, ClassifierMixin, RegressorMixin
from rustyml._validation import as_float_array, column_or_1d, target_array
from rustyml.machine_learning._labels import check_classification_targets
from rustyml.neural_network import layers, optimizers
from rustyml.neural_network._sequential import Sequential


def _features(X, estimator=None):
    """``X`` as float32 for the network: a ``fit`` (``estimator`` None) needs one row and one
    column at least; a prediction needs the fitted feature count."""
    X = as_float_array(X, "X", 2, min_samples=1 if estimator is None else 0)
    if estimator is not None and X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    return X.astype(np.float32, copy=False)


class _BaseMLP(BaseEstimator):
    # the fitted network (a Sequential, which pickles itself)
    _fitted_attribute = "model_"

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        learning_rate_init=0.001,
        batch_size=200,
        max_iter=200,
        alpha=0.0,
        random_state=None,
        verbose=0,
    ):
        self._store_params(locals())

    def _network(self, n_features, n_outputs, output_activation, loss):
        sizes = self.hidden_layer_sizes
        sizes = (sizes,) if isinstance(sizes, int) else tuple(sizes)
        if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in sizes):
            raise ValueError(f"hidden_layer_sizes must be positive integers, got {sizes!r}")
        if (
            isinstance(self.max_iter, bool)
            or not isinstance(self.max_iter, (int, np.integer))
            or self.max_iter < 1
        ):
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        rs = self.random_state
        if rs is not None and (
            isinstance(rs, bool) or not isinstance(rs, (int, np.integer)) or not 0 <= rs < 2**64
        ):
            raise ValueError(f"random_state must be None or an int in [0, 2**64), got {rs!r}")
        stack = []
        for i, units in enumerate(sizes):
            kwargs = {"input_shape": (n_features,)} if i == 0 else {}
            stack.append(layers.Dense(int(units), activation=self.activation, **kwargs))
        out_kwargs = {} if sizes else {"input_shape": (n_features,)}
        stack.append(layers.Dense(n_outputs, activation=output_activation, **out_kwargs))
        model = Sequential(stack, seed=self.random_state)
        # scikit-learn's alpha is an L2 penalty on the weights (kernels, not biases) added to
        # the gradient, not Keras's decoupled decay of every variable.
        optimizer = optimizers.Adam(self.learning_rate_init, weight_decay=float(self.alpha))
        model.compile(optimizer=optimizers._with_l2_kernel_decay(optimizer), loss=loss)
        return model

    def _train(self, model, X, y):
        batch = min(int(self.batch_size), len(X)) if self.batch_size != "auto" else min(200, len(X))
        history = model.fit(X, y, batch_size=batch, epochs=int(self.max_iter), verbose=self.verbose)
        self.loss_curve_ = history.history["loss"]
        self.loss_ = self.loss_curve_[-1]
        self.n_iter_ = len(self.loss_curve_)
        self.t_ = self.n_iter_ * len(X)
        self.n_features_in_ = X.shape[1]

    def _train_one_pass(self, model, X, y):
        """scikit-learn's ``partial_fit``: one pass over ``X`` in mini-batches, continuing the
        network and its optimizer state. The pass is numbered on from the earlier ones, so
        ``k`` calls on the same data shuffle as ``fit`` with ``max_iter=k`` does and give its
        bits."""
        done = self.__dict__.get("n_iter_", 0) if "model_" in self.__dict__ else 0
        batch = min(int(self.batch_size), len(X)) if self.batch_size != "auto" else min(200, len(X))
        history = model.fit(
            X, y, batch_size=batch, epochs=done + 1, initial_epoch=done, verbose=self.verbose
        )
        self.loss_curve_ = [*self.__dict__.get("loss_curve_", [])[:done], *history.history["loss"]]
        self.loss_ = self.loss_curve_[-1]
        self.n_iter_ = done + 1
        self.t_ = self.__dict__.get("t_", 0) + len(X) if done else len(X)
        self.n_features_in_ = X.shape[1]

    def __getstate__(self):
        # the fitted network pickles itself (weights, optimizer state, compile settings)
        return dict(self.__dict__)

    def __setstate__(self, state):
        state = dict(state)
        state.pop("_native_bytes", None)
        config = state.pop("_model_config", None)
        weights = state.pop("_model_weights", None)
        compiled = state.pop("_model_compile", None)
        self.__dict__.update(state)
        if config is not None:
            # Pickled by an older rustyml, which kept the network's config, weights and
            # compile settings (no optimizer state); today ``model_`` pickles itself.
            model = Sequential.from_config(config)
            model.build()
            model.set_weights(weights)
            import json

            from rustyml.neural_network import losses

            opt = json.loads(compiled[0])
            if "weight_decay_rule" not in opt.get("config", {}):
                # Pickled before the rule was stored: the MLP's decay was always L2 on kernels.
                opt.setdefault("config", {})["weight_decay_rule"] = "coupled_l2_kernels"
                compiled = (json.dumps(opt), compiled[1])
            loss = losses.get(json.loads(compiled[1]))
            model._compiled = (compiled[0], compiled[1], loss, [])
            model.loss = loss
            model._native.compile(*compiled)
            self.model_ = model


class MLPClassifier(ClassifierMixin, _BaseMLP):
    """A multi-layer perceptron classifier trained with Adam on cross-entropy."""

    def fit(self, X, y):
        X = _features(X)
        y = check_classification_targets(column_or_1d(y, self))
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} samples but y has {len(y)} labels")
        classes, codes = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(f"MLPClassifier needs at least 2 classes, got 1 class ({classes})")
        model = self._network(
            X.shape[1], len(classes), "softmax", "sparse_categorical_crossentropy"
        )
        self._train(model, X, codes)
        self.classes_ = classes
        self.model_ = model
        return self

    def partial_fit(self, X, y, classes=None):
        """One pass of mini-batch updates over ``X, y`` (scikit-learn's ``partial_fit``).
        ``classes`` (every label the calls will see) is required on the first call and, when
        given later, must be the same; a call after ``fit`` continues the fitted network."""
        fitted = "model_" in self.__dict__
        if classes is None and not fitted:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        if classes is not None:
            wanted = np.unique(check_classification_targets(column_or_1d(classes, self)))
            if fitted and not np.array_equal(self.classes_, wanted):
                raise ValueError(
                    f"`classes={classes!r}` is not the same as on last call to partial_fit, "
                    f"was: {self.classes_!r}"
                )
            if len(wanted) < 2:
                raise ValueError(f"MLPClassifier needs at least 2 classes, got {wanted}")
        else:
            wanted = self.classes_
        X = _features(X, self if fitted else None)
        y = check_classification_targets(column_or_1d(y, self))
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} samples but y has {len(y)} labels")
        unseen = np.setdiff1d(y, wanted)
        if len(unseen):
            raise ValueError(
                f"`y` has classes not in `self.classes_`. `self.classes_` has {wanted}. "
                f"'y' has {np.unique(y)}."
            )
        if fitted:
            model = self.model_
        else:
            model = self._network(
                X.shape[1], len(wanted), "softmax", "sparse_categorical_crossentropy"
            )
        self._train_one_pass(model, X, np.searchsorted(wanted, y))
        self.classes_ = wanted
        self.model_ = model
        return self

    def predict_proba(self, X):
        model = self._check_fitted()
        return model.predict(_features(X, self), batch_size=1024).astype(np.float64)

    def predict(self, X):
        proba = self.predict_proba(X)  # first: refuses an unfitted model with NotFittedError
        return self.classes_[np.argmax(proba, axis=1)]


class MLPRegressor(RegressorMixin, _BaseMLP):
    """A multi-layer perceptron regressor trained with Adam on squared error."""

    def fit(self, X, y):
        X = _features(X)
        y = target_array(y, self)
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} samples but y has {len(y)} targets")
        model = self._network(X.shape[1], 1, None, "mse")
        self._train(model, X, y.astype(np.float32))
        self.model_ = model
        return self

    def partial_fit(self, X, y):
        """One pass of mini-batch updates over ``X, y`` (scikit-learn's ``partial_fit``); a
        call after ``fit`` continues the fitted network."""
        fitted = "model_" in self.__dict__
        X = _features(X, self if fitted else None)
        y = target_array(y, self)
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} samples but y has {len(y)} targets")
        model = self.model_ if fitted else self._network(X.shape[1], 1, None, "mse")
        self._train_one_pass(model, X, y.astype(np.float32))
        self.model_ = model
        return self

    def predict(self, X):
        model = self._check_fitted()
        return model.predict(_features(X, self), batch_size=1024)[:, 0].astype(np.float64)
