//! Native label encoders, one class per label type (int64, float64, str); the Python
//! `LabelEncoder` picks one at fit from the labels' dtype.

use crate::persistence::Persist;
use crate::python::labels::maybe_detach;
use crate::python::to_py_err;
use crate::utils::label_encoding::LabelEncoder;
use ndarray::ArrayView1;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyModule};

fn codes_out(codes: ndarray::Array1<usize>) -> ndarray::Array1<i64> {
    codes.mapv(|c| c as i64)
}

macro_rules! numeric_encoder {
    ($py_name:ident, $name:literal, $t:ty) => {
        #[pyclass(name = $name, module = "rustyml._native.utils")]
        pub(crate) struct $py_name {
            inner: LabelEncoder<$t>,
        }

        #[pymethods]
        impl $py_name {
            #[new]
            fn new() -> Self {
                Self {
                    inner: LabelEncoder::new(),
                }
            }

            fn fit(&mut self, py: Python<'_>, y: PyReadonlyArray1<'_, $t>) -> PyResult<()> {
                let (y, model) = (y.as_array(), &mut self.inner);
                maybe_detach(py, y.len(), || model.fit(y).map(|_| ())).map_err(to_py_err)
            }

            fn transform<'py>(
                &self,
                py: Python<'py>,
                y: PyReadonlyArray1<'py, $t>,
            ) -> PyResult<Bound<'py, PyArray1<i64>>> {
                let (y, model) = (y.as_array(), &self.inner);
                Ok(
                    codes_out(maybe_detach(py, y.len(), || model.transform(y)).map_err(to_py_err)?)
                        .into_pyarray(py),
                )
            }

            fn fit_transform<'py>(
                &mut self,
                py: Python<'py>,
                y: PyReadonlyArray1<'py, $t>,
            ) -> PyResult<Bound<'py, PyArray1<i64>>> {
                let (y, model) = (y.as_array(), &mut self.inner);
                Ok(codes_out(
                    maybe_detach(py, y.len(), || model.fit_transform(y)).map_err(to_py_err)?,
                )
                .into_pyarray(py))
            }

            fn inverse_transform<'py>(
                &self,
                py: Python<'py>,
                codes: PyReadonlyArray1<'py, i64>,
            ) -> PyResult<Bound<'py, PyArray1<$t>>> {
                let labels = self
                    .inner
                    .inverse_transform(codes.as_array())
                    .map_err(to_py_err)?;
                Ok(ndarray::Array1::from(labels).into_pyarray(py))
            }

            #[getter]
            fn classes_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<$t>>> {
                self.inner
                    .classes()
                    .map(|c| ndarray::Array1::from(c.to_vec()).into_pyarray(py))
            }

            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
            }

            #[staticmethod]
            fn from_bytes(data: &[u8]) -> PyResult<Self> {
                Ok(Self {
                    inner: LabelEncoder::from_bytes(data).map_err(to_py_err)?,
                })
            }
        }
    };
}

numeric_encoder!(PyLabelEncoderI64, "LabelEncoderI64", i64);
numeric_encoder!(PyLabelEncoderF64, "LabelEncoderF64", f64);

/// String labels (passed as a list of `str`).
#[pyclass(name = "LabelEncoderStr", module = "rustyml._native.utils")]
pub(crate) struct PyLabelEncoderStr {
    inner: LabelEncoder<String>,
}

#[pymethods]
impl PyLabelEncoderStr {
    #[new]
    fn new() -> Self {
        Self {
            inner: LabelEncoder::new(),
        }
    }

    fn fit(&mut self, y: Vec<String>) -> PyResult<()> {
        self.inner
            .fit(ArrayView1::from(&y[..]))
            .map(|_| ())
            .map_err(to_py_err)
    }

    fn transform<'py>(
        &self,
        py: Python<'py>,
        y: Vec<String>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        Ok(codes_out(
            self.inner
                .transform(ArrayView1::from(&y[..]))
                .map_err(to_py_err)?,
        )
        .into_pyarray(py))
    }

    fn fit_transform<'py>(
        &mut self,
        py: Python<'py>,
        y: Vec<String>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        Ok(codes_out(
            self.inner
                .fit_transform(ArrayView1::from(&y[..]))
                .map_err(to_py_err)?,
        )
        .into_pyarray(py))
    }

    fn inverse_transform(&self, codes: PyReadonlyArray1<'_, i64>) -> PyResult<Vec<String>> {
        self.inner
            .inverse_transform(codes.as_array())
            .map_err(to_py_err)
    }

    #[getter]
    fn classes_(&self) -> Option<Vec<String>> {
        self.inner.classes().map(<[String]>::to_vec)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: LabelEncoder::from_bytes(data).map_err(to_py_err)?,
        })
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLabelEncoderI64>()?;
    m.add_class::<PyLabelEncoderF64>()?;
    m.add_class::<PyLabelEncoderStr>()?;
    Ok(())
}
