//! Native `SVC`.

use crate::machine_learning::{DecisionShape, SVC};
use crate::math::kernels::{Gamma, Kernel};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use ndarray::{Array1, Ix1, Ix2};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(name = "SVC", module = "rustyml._native.machine_learning")]
pub(crate) struct PySVC {
    inner: SVC,
}

fn not_fitted() -> PyErr {
    to_py_err(crate::RustymlError::not_fitted("SVC"))
}

fn parse_gamma(gamma: &Bound<'_, PyAny>) -> PyResult<Gamma> {
    if let Ok(s) = gamma.extract::<String>() {
        return Gamma::parse(&s).map_err(to_py_err);
    }
    if gamma.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "gamma must be 'scale', 'auto' or a number > 0, got a bool",
        ));
    }
    let v: f64 = gamma
        .extract()
        .map_err(|_| PyTypeError::new_err("gamma must be 'scale', 'auto' or a number > 0"))?;
    Gamma::value(v).map_err(to_py_err)
}

fn usize_array<'py>(py: Python<'py>, v: &[usize]) -> Bound<'py, PyArray1<i64>> {
    Array1::from_iter(v.iter().map(|&i| i as i64)).into_pyarray(py)
}

#[pymethods]
impl PySVC {
    #[new]
    #[pyo3(signature = (C = 1.0, kernel = "rbf", degree = 3, gamma = None, coef0 = 0.0, tol = 1e-3, cache_size = 200.0, max_iter = -1, decision_function_shape = "ovr"))]
    #[allow(non_snake_case, clippy::too_many_arguments)]
    fn new(
        C: f64,
        kernel: &str,
        degree: u32,
        gamma: Option<&Bound<'_, PyAny>>,
        coef0: f64,
        tol: f64,
        cache_size: f64,
        max_iter: i64,
        decision_function_shape: &str,
    ) -> PyResult<Self> {
        let gamma = match gamma {
            None => Gamma::Scale,
            Some(g) => parse_gamma(g)?,
        };
        let shape = match decision_function_shape {
            "ovr" => DecisionShape::Ovr,
            "ovo" => DecisionShape::Ovo,
            other => {
                return Err(PyValueError::new_err(format!(
                    "decision_function_shape must be 'ovr' or 'ovo', got {other:?}"
                )))
            }
        };
        let max_iter = match max_iter {
            -1 => None,
            n if n >= 1 => Some(n as usize),
            n => {
                return Err(PyValueError::new_err(format!(
                    "max_iter must be -1 (no limit) or a positive integer, got {n}"
                )))
            }
        };
        // Refuse an unknown kernel name here already (fit checks it again with the data).
        Kernel::parse(kernel, 1.0, degree, coef0).map_err(to_py_err)?;
        let inner = SVC::with_defaults()
            .with_c(C)
            .with_kernel(kernel)
            .with_degree(degree)
            .with_gamma(gamma)
            .with_coef0(coef0)
            .with_tol(tol)
            .with_cache_size(cache_size)
            .with_max_iter(max_iter)
            .with_decision_shape(shape);
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let y = f64_array::<Ix1>(y, "y")?;
        let (xv, yv) = (x.view(), y.view());
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit(&xv, &yv).map(|_| ())).map_err(to_py_err)
    }

    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(crate::python::parallel::detach(py, || model.predict(&xv))
            .map_err(to_py_err)?
            .into_pyarray(py))
    }

    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.decision_scores(xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    #[getter]
    fn classes_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .classes()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn support_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        self.inner
            .support()
            .map(|s| usize_array(py, s))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn support_vectors_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .support_vectors()
            .map(|s| s.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn n_support_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        self.inner
            .n_support()
            .map(|s| usize_array(py, s))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn dual_coef_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .dual_coef()
            .map(|c| c.into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn intercept_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .intercept()
            .map(|c| c.into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    /// Primal weights for the linear kernel; `None` for the other kernels.
    #[getter]
    fn coef_<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        if self.inner.classes().is_none() {
            return Err(not_fitted());
        }
        Ok(self.inner.coefficients().map(|c| c.into_pyarray(py)))
    }

    #[getter]
    fn n_iter_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        self.inner
            .n_iter()
            .map(|s| usize_array(py, s))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn converged_(&self) -> PyResult<bool> {
        self.inner.converged().ok_or_else(not_fitted)
    }

    /// The numeric gamma the fitted kernel uses (`_gamma` in scikit-learn).
    #[getter]
    fn gamma_(&self) -> PyResult<Option<f64>> {
        let kernel = self.inner.fitted_kernel().ok_or_else(not_fitted)?;
        Ok(match kernel {
            Kernel::Linear => None,
            Kernel::Poly { gamma, .. } | Kernel::Rbf { gamma } | Kernel::Sigmoid { gamma, .. } => {
                Some(gamma)
            }
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: SVC::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
