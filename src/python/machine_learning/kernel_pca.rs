//! Native `KernelPCA`.

use crate::machine_learning::KernelPCA;
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use crate::RustymlError;
use ndarray::Ix2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(name = "KernelPCA", module = "rustyml._native.machine_learning")]
pub(crate) struct PyKernelPCA {
    inner: KernelPCA,
}

fn not_fitted() -> PyErr {
    to_py_err(RustymlError::not_fitted("KernelPCA"))
}

#[pymethods]
impl PyKernelPCA {
    #[new]
    #[pyo3(signature = (n_components = None, kernel = "linear", gamma = None, degree = 3.0, coef0 = 1.0))]
    fn new(
        n_components: Option<i64>,
        kernel: &str,
        gamma: Option<f64>,
        degree: f64,
        coef0: f64,
    ) -> PyResult<Self> {
        let n_components = match n_components {
            Some(k) if k < 1 => {
                return Err(PyValueError::new_err(format!(
                    "n_components must be >= 1 or None, got {k}"
                )))
            }
            Some(k) => Some(k as usize),
            None => None,
        };
        if !(degree.is_finite()
            && degree >= 0.0
            && degree.fract() == 0.0
            && degree <= u32::MAX as f64)
        {
            return Err(PyValueError::new_err(format!(
                "degree must be a non-negative integer, got {degree}"
            )));
        }
        let inner = KernelPCA::builder(n_components, kernel)
            .with_gamma(gamma)
            .with_degree(degree as u32)
            .with_coef0(coef0);
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit_checked(&xv).map(|_| ()))
            .map_err(to_py_err)
    }

    fn fit_transform<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &mut self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.fit_transform_checked(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.transform_checked(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    #[getter]
    fn eigenvalues_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .eigenvalues()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn eigenvectors_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .eigenvectors()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    #[allow(non_snake_case)]
    fn X_fit_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .x_fit()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn gamma_(&self) -> PyResult<Option<f64>> {
        self.inner.x_fit().ok_or_else(not_fitted)?;
        Ok(self.inner.gamma_used())
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: KernelPCA::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
