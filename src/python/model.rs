//! What every native model class shares: the model behind a reader-writer lock taken with the
//! GIL released, conversion of results to Python, the not-fitted error, the byte round trip,
//! and [`native_estimator!`], which stamps an estimator's `#[pyclass]` from one declaration
//! (keyword constructor, `fit`, array-in/array-out methods, fitted attributes, pickling).
//!
//! Reads (predict, transform, score, fitted attributes, `to_bytes`) share the lock, so threads
//! using one fitted model run at once; mutating calls (fit, partial_fit, fit_transform) take it
//! alone. The class is `frozen`: PyO3 keeps no borrow flag, so a read never meets "Already
//! mutably borrowed" while a fit runs; it waits for the fit instead.

use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use ndarray::{ArrayView1, ArrayView2, Dimension, Ix1, Ix2};
use numpy::{Element, IntoPyArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3::IntoPyObjectExt;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

/// The weight and learning-rate methods a Python network class shares (Sequential and the
/// functional model): a second `#[pymethods]` block (pyo3's `multiple-pymethods`) over the
/// class's own `read` / `write` guards, whose targets have the same methods.
macro_rules! network_weight_pymethods {
    ($class:ty) => {
        #[pyo3::pymethods]
        impl $class {
            /// Every layer's weights in Keras's order and shapes.
            fn get_weights<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<Vec<pyo3::Bound<'py, numpy::PyArrayDyn<f32>>>> {
                use numpy::IntoPyArray;
                let weights = self.read(py)?.get_weights();
                Ok(weights.into_iter().map(|a| a.into_pyarray(py)).collect())
            }

            /// The names of each layer's weight arrays (config order; empty for inputs and
            /// layers without weights), in `get_weights` order.
            fn weight_names(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<Vec<Vec<String>>> {
                Ok(self.read(py)?.weight_names())
            }

            /// Loads weights given in Keras's order and shapes; all are checked before any
            /// is set.
            fn set_weights(
                &self,
                py: pyo3::Python<'_>,
                weights: Vec<numpy::PyReadonlyArrayDyn<'_, f32>>,
            ) -> pyo3::PyResult<()> {
                let arrays = weights.iter().map(|w| w.as_array().to_owned()).collect();
                self.write(py)?
                    .set_weights(arrays)
                    .map_err($crate::python::to_py_err)
            }

            #[getter]
            fn learning_rate(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<Option<f32>> {
                Ok(self.read(py)?.model().learning_rate())
            }

            #[setter]
            fn set_learning_rate(&self, py: pyo3::Python<'_>, value: f32) -> pyo3::PyResult<()> {
                // 0 is a learning rate Keras accepts (warm-up schedules start there)
                if !(value.is_finite() && value >= 0.0) {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "learning_rate must be a finite number >= 0, got {value}"
                    )));
                }
                self.write(py)?.model_mut().set_learning_rate(value);
                Ok(())
            }
        }
    };
}
pub(crate) use network_weight_pymethods;

/// A network's state to read for one call; any number of readers hold it at once. Waited for
/// with the GIL released: a thread holding the lock may need the GIL to finish (it reattaches
/// after its own detached work), so waiting while holding the GIL would deadlock the two. A
/// network poisoned by a panic mid-step is refused (its weights may be half-updated).
pub(crate) fn read_network<'a, T: Send + Sync>(
    lock: &'a RwLock<T>,
    py: Python<'_>,
) -> PyResult<RwLockReadGuard<'a, T>> {
    loop {
        match lock.try_read() {
            Ok(guard) => return Ok(guard),
            Err(TryLockError::Poisoned(_)) => return Err(poisoned_network()),
            Err(TryLockError::WouldBlock) => py.detach(|| drop(lock.read())),
        }
    }
}

/// A network's state to change for one call (a training step, a setter): waits, GIL
/// released, until no other call reads or writes it.
pub(crate) fn write_network<'a, T: Send + Sync>(
    lock: &'a RwLock<T>,
    py: Python<'_>,
) -> PyResult<RwLockWriteGuard<'a, T>> {
    loop {
        match lock.try_write() {
            Ok(guard) => return Ok(guard),
            Err(TryLockError::Poisoned(_)) => return Err(poisoned_network()),
            Err(TryLockError::WouldBlock) => py.detach(|| drop(lock.write())),
        }
    }
}

fn poisoned_network() -> PyErr {
    PyValueError::new_err("the model was poisoned by an earlier failure")
}

/// A model shared between Python threads. A poisoned lock still holds a consistent model:
/// every method builds its result first and assigns it only on success.
pub(crate) struct SharedModel<M>(RwLock<M>);

impl<M: Send + Sync> SharedModel<M> {
    pub(crate) fn new(model: M) -> Self {
        Self(RwLock::new(model))
    }

    fn read_guard(&self) -> RwLockReadGuard<'_, M> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Call the Python callable `f` while holding the shared lock, so a test can show that
    /// other reads proceed meanwhile (and wait for an event, never a timer). The lock is
    /// taken with the GIL held: a fit in progress holds no GIL and finishes regardless.
    pub(crate) fn call_while_reading<'py>(
        &self,
        f: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _guard = self.read_guard();
        f.call0()
    }

    /// Run `f` on a shared borrow with the GIL released; the lock is taken after the GIL is
    /// let go, so no thread waits for the lock while holding the GIL, and before the call
    /// enters the worker pool (`crate::parallel`: a pool thread must never wait for a lock).
    pub(crate) fn read<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&M) -> R + Send) -> R {
        py.detach(|| {
            let guard = self.read_guard();
            crate::parallel::install(|| f(&guard))
        })
    }

    /// Run `f` on the model alone (fit and the like), GIL released; locked as `read` is.
    pub(crate) fn write<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut M) -> R + Send) -> R {
        py.detach(|| {
            let mut guard = self.0.write().unwrap_or_else(PoisonError::into_inner);
            let model: &mut M = &mut guard;
            crate::parallel::install(|| f(model))
        })
    }

    /// A read call on a 2-D float array `X`.
    pub(crate) fn read_x<'py, R: ToPython + Send>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        f: impl FnOnce(&M, ArrayView2<'_, f64>) -> crate::Result<R> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let out = self.read(py, |m| f(m, xv)).map_err(to_py_err)?;
        out.to_python(py)
    }

    /// [`read_x`](Self::read_x) on the fitted estimator `model`: a refusal of `X` for its
    /// feature count is worded as scikit-learn words it.
    pub(crate) fn read_fitted_x<'py, R: ToPython + Send>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        model: &'static str,
        f: impl FnOnce(&M, ArrayView2<'_, f64>) -> crate::Result<R> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.read_x(py, x, move |m, xv| {
            f(m, xv).map_err(|e| crate::python::errors::feature_count_in_words(e, model))
        })
    }

    /// A mutating call on a 2-D float array `X` (fit, fit_transform).
    pub(crate) fn write_x<'py, R: ToPython + Send>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        f: impl FnOnce(&mut M, ArrayView2<'_, f64>) -> crate::Result<R> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let out = self.write(py, |m| f(m, xv)).map_err(to_py_err)?;
        out.to_python(py)
    }

    /// A mutating call on `X` and a 1-D float target `y` (a supervised fit).
    pub(crate) fn write_xy<'py, R: ToPython + Send>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        y: &Bound<'py, PyAny>,
        f: impl FnOnce(&mut M, ArrayView2<'_, f64>, ArrayView1<'_, f64>) -> crate::Result<R> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let y = f64_array::<Ix1>(y, "y")?;
        let (xv, yv) = (x.view(), y.view());
        let out = self.write(py, |m| f(m, xv, yv)).map_err(to_py_err)?;
        out.to_python(py)
    }

    /// A fitted attribute: `get` answers `None` before the fit, which is `NotFittedError`
    /// naming `model`. The value is copied out under the lock (NumPy takes the copy after
    /// the lock is released, as Python objects need the GIL).
    pub(crate) fn fitted<'py, R: ToPython + Send>(
        &self,
        py: Python<'py>,
        model: &'static str,
        get: impl FnOnce(&M) -> Option<R> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.read(py, get)
            .ok_or_else(|| to_py_err(crate::Error::not_fitted(model)))?
            .to_python(py)
    }
}

impl<M: Persist + Send + Sync> SharedModel<M> {
    /// The model's binary encoding (the pickle payload).
    pub(crate) fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.read(py, |m| m.to_bytes()).map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Decode what [`SharedModel::to_bytes`] wrote (the model's own load checks apply).
    pub(crate) fn from_bytes(data: &[u8]) -> PyResult<Self> {
        M::from_bytes(data).map(Self::new).map_err(to_py_err)
    }
}

/// A result handed to Python: arrays go to NumPy without a copy, `None` is Python's `None`.
pub(crate) trait ToPython {
    fn to_python(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>>;
}

macro_rules! scalar_to_python {
    ($($t:ty),*) => {$(
        impl ToPython for $t {
            fn to_python(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
                self.into_bound_py_any(py)
            }
        }
    )*};
}
scalar_to_python!(bool, f64, usize, i64, &'static str);

impl<T: Element, D: Dimension> ToPython for ndarray::Array<T, D> {
    fn to_python(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        Ok(self.into_pyarray(py).into_any())
    }
}

impl ToPython for () {
    fn to_python(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        Ok(py.None().into_bound(py))
    }
}

impl<T: ToPython> ToPython for Option<T> {
    fn to_python(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        match self {
            Some(v) => v.to_python(py),
            None => Ok(py.None().into_bound(py)),
        }
    }
}

impl<A: ToPython, B: ToPython> ToPython for (A, B) {
    fn to_python(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        (self.0.to_python(py)?, self.1.to_python(py)?).into_bound_py_any(py)
    }
}

/// Indices or counts as the int64 NumPy arrays scikit-learn returns.
pub(crate) fn index_array(v: &[usize]) -> ndarray::Array1<i64> {
    v.iter().map(|&i| i as i64).collect()
}

/// Stamp a native estimator class from one declaration:
///
/// ```ignore
/// native_estimator! {
///     PyKMeans(KMeans, "KMeans");
///     new(n_clusters: usize, ...) { /* build the model from the keywords */ }
///     fit(x) => |m, x| m.fit_checked(&x).map(|_| ());      // or fit(x, y) => |m, x, y| ...
///     read predict => |m, x| m.predict_checked(&x);          // shared lock
///     write fit_transform => |m, x| m.fit_transform(&x);    // exclusive lock
///     fitted inertia_ => |m| m.inertia();                   // a getter; None = not fitted
///     query get_depth => |m| m.depth();                     // the same as a method
///     { /* the class's own #[pymethods] items */ }
/// }
/// ```
///
/// The constructor takes every hyper-parameter by keyword and has no defaults of its own: the
/// Python wrapper's signature is the one place they live. Every call runs with the GIL
/// released; `to_bytes`/`from_bytes` carry the model's binary encoding for pickling.
macro_rules! native_estimator {
    (
        $(#[$meta:meta])*
        $py_name:ident($model:ty, $name:literal);
        $(#[$new_meta:meta])*
        new($($arg:ident: $ty:ty),* $(,)?) $new_body:block
        fit($($fit_arg:ident),+) => $fit:expr;
        $(read $read:ident => $read_f:expr;)*
        $(write $write:ident => $write_f:expr;)*
        $(fitted $attr:ident => $get:expr;)*
        $(query $query:ident => $query_f:expr;)*
        $({ $($own:tt)* })?
    ) => {
        $(#[$meta])*
        #[pyclass(name = $name, module = "rustyml._native.machine_learning", frozen)]
        pub(crate) struct $py_name {
            inner: $crate::python::model::SharedModel<$model>,
        }

        impl $py_name {
            const NAME: &'static str = $name;

            #[allow(clippy::too_many_arguments, non_snake_case)]
            fn build($($arg: $ty),*) -> PyResult<$model> $new_body
        }

        #[pymethods]
        impl $py_name {
            $(#[$new_meta])*
            #[new]
            #[pyo3(signature = (*, $($arg),*))]
            #[allow(clippy::too_many_arguments, non_snake_case)]
            fn new($($arg: $ty),*) -> PyResult<Self> {
                Ok(Self {
                    inner: $crate::python::model::SharedModel::new(Self::build($($arg),*)?),
                })
            }

            fn fit<'py>(&self, py: Python<'py>, $($fit_arg: &Bound<'py, PyAny>),+) -> PyResult<()> {
                $crate::python::model::native_estimator!(@fit self, py, $fit; $($fit_arg),+)
            }

            $(
                fn $read<'py>(
                    &self,
                    py: Python<'py>,
                    x: &Bound<'py, PyAny>,
                ) -> PyResult<Bound<'py, PyAny>> {
                    self.inner.read_fitted_x(py, x, $name, $read_f)
                }
            )*

            $(
                fn $write<'py>(
                    &self,
                    py: Python<'py>,
                    x: &Bound<'py, PyAny>,
                ) -> PyResult<Bound<'py, PyAny>> {
                    self.inner.write_x(py, x, $write_f)
                }
            )*

            $(
                #[getter]
                #[allow(non_snake_case)]
                fn $attr<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                    self.inner.fitted(py, Self::NAME, $get)
                }
            )*

            $(
                fn $query<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                    self.inner.fitted(py, Self::NAME, $query_f)
                }
            )*

            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                self.inner.to_bytes(py)
            }

            /// Call `f()` holding the model's shared lock (tests of concurrent reads).
            fn _call_while_reading<'py>(
                &self,
                f: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.inner.call_while_reading(f)
            }

            /// Decode a model written by `to_bytes`; an inconsistent fitted state is refused.
            #[staticmethod]
            fn from_bytes(data: &[u8]) -> PyResult<Self> {
                Ok(Self {
                    inner: $crate::python::model::SharedModel::from_bytes(data)?,
                })
            }

            $($($own)*)?
        }
    };
    (@fit $self:ident, $py:ident, $fit:expr; $x:ident) => {
        $self.inner.write_x($py, $x, $fit).map(|_| ())
    };
    (@fit $self:ident, $py:ident, $fit:expr; $x:ident, $y:ident) => {
        $self.inner.write_xy($py, $x, $y, $fit).map(|_| ())
    };
}

pub(crate) use native_estimator;
