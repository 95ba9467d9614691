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

/// One native encoder class per label type. The types differ only in how labels cross the
/// boundary: `$input` is what a method takes, `$view` borrows it as an array view, and `$out`
/// turns decoded labels (or the classes) into what Python gets back.
macro_rules! label_encoder {
    (
        $py_name:ident, $name:literal, $t:ty,
        input: $input:ty, view($y:ident) => $view:expr,
        output: $output:ty, out($py:ident, $labels:ident) => $out:expr $(,)?
    ) => {
        #[pyclass(name = $name, module = "rustyml._native.utils", frozen)]
        pub(crate) struct $py_name {
            inner: SharedModel<LabelEncoder<$t>>,
        }

        impl $py_name {
            fn labels_out<'py>($py: Python<'py>, $labels: Vec<$t>) -> $output {
                $out
            }
        }

        #[pymethods]
        impl $py_name {
            #[new]
            fn new() -> Self {
                Self {
                    inner: SharedModel::new(LabelEncoder::new()),
                }
            }

            fn fit<'py>(&self, py: Python<'py>, $y: $input) -> PyResult<()> {
                let y = $view;
                self.inner
                    .write(py, |m| m.fit(y).map(|_| ()))
                    .map_err(to_py_err)
            }

            fn transform<'py>(
                &self,
                py: Python<'py>,
                $y: $input,
            ) -> PyResult<Bound<'py, PyArray1<i64>>> {
                let y = $view;
                let codes = self.inner.read(py, |m| m.transform(y)).map_err(to_py_err)?;
                Ok(codes_out(codes).into_pyarray(py))
            }

            fn fit_transform<'py>(
                &self,
                py: Python<'py>,
                $y: $input,
            ) -> PyResult<Bound<'py, PyArray1<i64>>> {
                let y = $view;
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
            ) -> PyResult<$output> {
                let codes = codes.as_array();
                let labels = self
                    .inner
                    .read(py, |m| m.inverse_transform(codes))
                    .map_err(to_py_err)?;
                Ok(Self::labels_out(py, labels))
            }

            #[getter]
            fn classes_<'py>(&self, py: Python<'py>) -> Option<$output> {
                self.inner
                    .read(py, |m| m.classes().map(<[$t]>::to_vec))
                    .map(|c| Self::labels_out(py, c))
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

/// Numbers cross as NumPy arrays.
macro_rules! numeric_encoder {
    ($py_name:ident, $name:literal, $t:ty) => {
        label_encoder!(
            $py_name, $name, $t,
            input: PyReadonlyArray1<'py, $t>, view(y) => y.as_array(),
            output: Bound<'py, PyArray1<$t>>,
            out(py, labels) => ndarray::Array1::from(labels).into_pyarray(py),
        );
    };
}

numeric_encoder!(PyLabelEncoderI64, "LabelEncoderI64", i64);
numeric_encoder!(PyLabelEncoderF64, "LabelEncoderF64", f64);

// String labels cross as lists of `str`.
label_encoder!(
    PyLabelEncoderStr, "LabelEncoderStr", String,
    input: Vec<String>, view(y) => ArrayView1::from(&y[..]),
    output: Vec<String>, out(_py, labels) => labels,
);

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLabelEncoderI64>()?;
    m.add_class::<PyLabelEncoderF64>()?;
    m.add_class::<PyLabelEncoderStr>()?;
    Ok(())
}
