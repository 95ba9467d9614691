//! NumPy array conversion at the boundary.
//!
//! f64 (and f32 for kernels that have an f32 path) arrays of the right dtype are read in place,
//! strided views included; the other float dtype is converted (one copy, documented); anything
//! else is a `TypeError`, a wrong number of dimensions a `ValueError`.

use crate::math::given_distances::GivenGraph;
use gemmkit_ndarray::Parallelism;
use ndarray::{Array, ArrayView, Dimension};
use numpy::{
    PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray, PyReadonlyArray1, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// A float array borrowed from NumPy in its own dtype.
pub(crate) enum FloatArray<'py, D: Dimension> {
    F32(PyReadonlyArray<'py, f32, D>),
    F64(PyReadonlyArray<'py, f64, D>),
}

fn untyped<'a, 'py>(
    obj: &'a Bound<'py, PyAny>,
    name: &str,
) -> PyResult<&'a Bound<'py, PyUntypedArray>> {
    obj.cast::<PyUntypedArray>().map_err(|_| {
        let ty = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        PyTypeError::new_err(format!("{name} must be a numpy.ndarray, got {ty}"))
    })
}

fn check_ndim(arr: &Bound<'_, PyUntypedArray>, name: &str, ndim: Option<usize>) -> PyResult<()> {
    if let Some(want) = ndim {
        if arr.ndim() != want {
            return Err(PyValueError::new_err(format!(
                "{name} must be {want}-dimensional, got a {}-dimensional array of shape {:?}",
                arr.ndim(),
                arr.shape()
            )));
        }
    }
    Ok(())
}

/// `obj` itself, or an aligned copy of it: NumPy allows arrays whose data or strides are not
/// multiples of the element size (buffers unpickled by dask or joblib, `np.frombuffer` at an
/// odd offset), which no Rust slice or view may point at.
fn aligned<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if obj
        .getattr("flags")?
        .getattr("aligned")?
        .extract::<bool>()?
    {
        Ok(obj.clone())
    } else {
        obj.call_method0("copy")
    }
}

/// Borrow a float32/float64 array of dimensionality `D` without copying (an unaligned array
/// is copied once).
pub(crate) fn float_array<'py, D: Dimension>(
    obj: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<FloatArray<'py, D>> {
    untyped(obj, name)?;
    let obj = &aligned(obj)?;
    let arr = untyped(obj, name)?;
    check_ndim(arr, name, D::NDIM)?;
    let dtype = arr.dtype();
    let py = obj.py();
    if dtype.is_equiv_to(&numpy::dtype::<f64>(py)) {
        Ok(FloatArray::F64(
            obj.cast::<numpy::PyArray<f64, D>>()?.readonly(),
        ))
    } else if dtype.is_equiv_to(&numpy::dtype::<f32>(py)) {
        Ok(FloatArray::F32(
            obj.cast::<numpy::PyArray<f32, D>>()?.readonly(),
        ))
    } else {
        Err(PyTypeError::new_err(format!(
            "{name} must have dtype float32 or float64, got {}",
            dtype
                .str()
                .map(|s| s.to_string())
                .unwrap_or_else(|_| "?".into())
        )))
    }
}

/// An f64 view of a NumPy array: borrowed in place when it already is f64, converted once
/// from f32 otherwise.
pub(crate) enum F64Input<'py, D: Dimension> {
    Borrowed(PyReadonlyArray<'py, f64, D>),
    Converted(Array<f64, D>),
}

impl<D: Dimension> F64Input<'_, D> {
    pub(crate) fn view(&self) -> ArrayView<'_, f64, D> {
        match self {
            F64Input::Borrowed(a) => a.as_array(),
            F64Input::Converted(a) => a.view(),
        }
    }
}

/// Read a float array as f64 (`TypeError` for other dtypes, `ValueError` for a wrong ndim).
pub(crate) fn f64_array<'py, D: Dimension>(
    obj: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<F64Input<'py, D>> {
    Ok(match float_array::<D>(obj, name)? {
        // A view with a negative stride is copied to row-major first: the product kernels
        // read it with the reversed axis running forwards, so the same sums were taken in
        // another order and the bits differed from its contiguous copy (TSNE amplified an ulp
        // into embeddings 99 apart). A copy makes every estimator see `X[:, ::-1]` exactly as
        // `np.ascontiguousarray(X[:, ::-1])`.
        FloatArray::F64(a) if a.strides().iter().any(|&s| s < 0) => {
            F64Input::Converted(a.as_array().as_standard_layout().into_owned())
        }
        FloatArray::F64(a) => F64Input::Borrowed(a),
        FloatArray::F32(a) => {
            F64Input::Converted(a.as_array().as_standard_layout().mapv(f64::from))
        }
    })
}

/// Parse a `parallelism` argument: `"auto"`, `"serial"` or a positive worker count.
pub(crate) fn parse_parallelism(obj: &Bound<'_, PyAny>) -> PyResult<Parallelism> {
    if let Ok(s) = obj.extract::<String>() {
        return match s.as_str() {
            "auto" => Ok(Parallelism::Rayon(0)),
            "serial" => Ok(Parallelism::Serial),
            other => Err(PyValueError::new_err(format!(
                "parallelism must be 'auto', 'serial' or a positive worker count, got {other:?}"
            ))),
        };
    }
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "parallelism must be 'auto', 'serial' or a positive worker count, got a bool",
        ));
    }
    match obj.extract::<i64>() {
        Ok(n) if n >= 1 => Ok(Parallelism::Rayon(n as usize)),
        Ok(n) => Err(PyValueError::new_err(format!(
            "parallelism worker count must be >= 1, got {n}"
        ))),
        Err(_) => Err(PyTypeError::new_err(
            "parallelism must be 'auto', 'serial' or a positive worker count",
        )),
    }
}

/// An array of positions (indices into another array) as `usize`s; a negative entry is a
/// `ValueError` naming `what`.
pub(crate) fn positions(a: &PyReadonlyArray1<'_, i64>, what: &str) -> PyResult<Vec<usize>> {
    a.as_array()
        .iter()
        .map(|&v| usize::try_from(v))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| PyValueError::new_err(format!("{what} holds a negative entry")))
}

/// A sparse distance graph's CSR parts from Python (`data` as float64, `indices` and `indptr`
/// as int64 positions), owned so that the work can run without the GIL.
pub(crate) struct GraphParts {
    values: Vec<f64>,
    indices: Vec<usize>,
    indptr: Vec<usize>,
}

impl GraphParts {
    pub(crate) fn from_py(
        data: &Bound<'_, PyAny>,
        indices: &PyReadonlyArray1<'_, i64>,
        indptr: &PyReadonlyArray1<'_, i64>,
    ) -> PyResult<Self> {
        Ok(Self {
            values: crate::python::f64_array::<ndarray::Ix1>(data, "data")?
                .view()
                .to_vec(),
            indices: positions(indices, "indices")?,
            indptr: positions(indptr, "indptr")?,
        })
    }

    /// The parts as a checked graph.
    pub(crate) fn graph(&self) -> crate::error::Result<GivenGraph<'_>> {
        GivenGraph::new(&self.values, &self.indices, &self.indptr)
    }
}

/// A CSR matrix's parts as scikit-learn's compiled wrappers read them: `(indptr, indices,
/// data)`, 32-bit indices, float64 values.
pub(crate) type CsrParts<'py> = (
    PyReadonlyArray1<'py, i32>,
    PyReadonlyArray1<'py, i32>,
    PyReadonlyArray1<'py, f64>,
);

/// A CSR index array (`what`: row pointer or column index) as `usize`s; a negative entry
/// is an error.
pub(crate) fn csr_index(a: &PyReadonlyArray1<'_, i32>, what: &str) -> PyResult<Vec<usize>> {
    a.as_array()
        .iter()
        .map(|&v| usize::try_from(v))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            crate::python::to_py_err(crate::error::Error::invalid_input(format!(
                "sparse x: a negative {what}"
            )))
        })
}
