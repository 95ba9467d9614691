//! Native label encoders, one class per label type (int64, float64, str); the Python
//! `LabelEncoder` picks one at fit from the labels' dtype.
//!
//! Each native encoder keeps its model in a [`SharedModel`]: encoding and decoding share the
//! lock, fits take it alone, all with the GIL released.

use crate::python::model::SharedModel;
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
        #[pyclass(name = $name, module = "rustyml._native.utils", frozen)]
        pub(crate) struct $py_name {
            inner: SharedModel<LabelEncoder<$t>>,
        }

        #[pymethods]
        impl $py_name {
            #[new]
            fn new() -> Self {
                Self {
                    inner: SharedModel::new(LabelEncoder::new()),
                }
            }

            fn fit(&self, py: Python<'_>, y: PyReadonlyArray1<'_, $t>) -> PyResult<()> {
                let y = y.as_array();
                self.inner
                    .write(py, |m| m.fit(y).map(|_| ()))
                    .map_err(to_py_err)
            }

            fn transform<'py>(
                &self,
                py: Python<'py>,
                y: PyReadonlyArray1<'py, $t>,
            ) -> PyResult<Bound<'py, PyArray1<i64>>> {
                let y = y.as_array();
                let codes = self.inner.read(py, |m| m.transform(y)).map_err(to_py_err)?;
                Ok(codes_out(codes).into_pyarray(py))
            }

            fn fit_transform<'py>(
                &self,
                py: Python<'py>,
                y: PyReadonlyArray1<'py, $t>,
            ) -> PyResult<Bound<'py, PyArray1<i64>>> {
                let y = y.as_array();
                let codes = self
                    .inner
                    .write(py, |m| m.fit_transform(y))
                    .map_err(to_py_err)?;
                Ok(codes_out(codes).into_pyarray(py))
            }

            fn inverse_transform<'py>(
                &self,
                py: Python<'py>,
                codes: PyReadonlyArray1<'py, i64>,
            ) -> PyResult<Bound<'py, PyArray1<$t>>> {
                let codes = codes.as_array();
                let labels = self
                    .inner
                    .read(py, |m| m.inverse_transform(codes))
                    .map_err(to_py_err)?;
                Ok(ndarray::Array1::from(labels).into_pyarray(py))
            }

            #[getter]
            fn classes_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<$t>>> {
                self.inner
                    .read(py, |m| m.classes().map(<[$t]>::to_vec))
                    .map(|c| ndarray::Array1::from(c).into_pyarray(py))
            }

            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                self.inner.to_bytes(py)
            }

            #[staticmethod]
            fn from_bytes(data: &[u8]) -> PyResult<Self> {
                Ok(Self {
                    inner: SharedModel::from_bytes(data)?,
                })
            }
        }
    };
}

numeric_encoder!(PyLabelEncoderI64, "LabelEncoderI64", i64);
numeric_encoder!(PyLabelEncoderF64, "LabelEncoderF64", f64);

/// String labels (passed as a list of `str`).
#[pyclass(name = "LabelEncoderStr", module = "rustyml._native.utils", frozen)]
pub(crate) struct PyLabelEncoderStr {
    inner: SharedModel<LabelEncoder<String>>,
}

#[pymethods]
impl PyLabelEncoderStr {
    #[new]
    fn new() -> Self {
        Self {
            inner: SharedModel::new(LabelEncoder::new()),
        }
    }

    fn fit(&self, py: Python<'_>, y: Vec<String>) -> PyResult<()> {
        self.inner
            .write(py, |m| m.fit(ArrayView1::from(&y[..])).map(|_| ()))
            .map_err(to_py_err)
    }

    fn transform<'py>(
        &self,
        py: Python<'py>,
        y: Vec<String>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let codes = self
            .inner
            .read(py, |m| m.transform(ArrayView1::from(&y[..])))
            .map_err(to_py_err)?;
        Ok(codes_out(codes).into_pyarray(py))
    }

    fn fit_transform<'py>(
        &self,
        py: Python<'py>,
        y: Vec<String>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let codes = self
            .inner
            .write(py, |m| m.fit_transform(ArrayView1::from(&y[..])))
            .map_err(to_py_err)?;
        Ok(codes_out(codes).into_pyarray(py))
    }

    fn inverse_transform(
        &self,
        py: Python<'_>,
        codes: PyReadonlyArray1<'_, i64>,
    ) -> PyResult<Vec<String>> {
        let codes = codes.as_array();
        self.inner
            .read(py, |m| m.inverse_transform(codes))
            .map_err(to_py_err)
    }

    #[getter]
    fn classes_(&self, py: Python<'_>) -> Option<Vec<String>> {
        self.inner.read(py, |m| m.classes().map(<[String]>::to_vec))
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.inner.to_bytes(py)
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: SharedModel::from_bytes(data)?,
        })
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLabelEncoderI64>()?;
    m.add_class::<PyLabelEncoderF64>()?;
    m.add_class::<PyLabelEncoderStr>()?;
    Ok(())
}
