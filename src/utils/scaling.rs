//! Rules shared by the scalers and the one-shot `standardize` / `normalize`: scikit-learn's
//! constant-feature test and zero-scale guard, the input checks every fit / transform runs
//! first (with the original crate's error variants), and the checks a loaded model's fitted
//! state must pass before it is used.

use crate::error::{Error, IoError, Result};
use crate::math::reduction::{self, Moments};
use crate::persistence::Persist;
use crate::validation;
use ndarray::{Array, Array1, ArrayBase, ArrayView2, Axis, CowArray, Data, Dimension, Ix2, Ix3};

/// scikit-learn's `_is_constant_feature`: a variance within the error bound of its own
/// computation (`n eps var + (n mean eps)^2`) is treated as zero.
pub(crate) fn is_constant_feature(var: f64, mean: f64, n: f64) -> bool {
    let eps = f64::EPSILON;
    var <= n * eps * var + (n * mean * eps).powi(2)
}

/// scikit-learn's `_handle_zeros_in_scale`: scales below `10 eps` become 1 (leave unscaled).
pub(crate) fn handle_zero_scale(scale: f64) -> f64 {
    if scale < 10.0 * f64::EPSILON {
        1.0
    } else {
        scale
    }
}

/// The standard deviation to divide by, 1 for a constant feature.
pub(crate) fn std_scale(m: &Moments) -> f64 {
    let var = m.variance();
    if is_constant_feature(var, m.mean, m.count as f64) {
        1.0
    } else {
        var.sqrt()
    }
}

/// `x` must have at least one sample and one feature (`EmptyInput`).
pub(crate) fn check_not_empty(x: &ArrayView2<f64>, name: &str) -> Result<()> {
    if x.nrows() == 0 || x.ncols() == 0 {
        return Err(Error::empty_input(format!(
            "{name} has shape ({}, {}): at least 1 sample and 1 feature are required",
            x.nrows(),
            x.ncols()
        )));
    }
    Ok(())
}

/// `NonFinite` naming the first NaN or infinity of `x`, if there is one.
pub(crate) fn check_finite(x: &ArrayView2<f64>, name: &str) -> Result<()> {
    if x.as_slice_memory_order()
        .is_some_and(validation::all_finite)
    {
        return Ok(());
    }
    match x.indexed_iter().find(|(_, v)| !v.is_finite()) {
        Some(((i, j), _)) => Err(Error::non_finite(format!(
            "{name} (first at row {i}, column {j})"
        ))),
        None => Ok(()),
    }
}

/// Non-empty and finite: what every fit needs.
pub(crate) fn check_input(x: &ArrayView2<f64>, name: &str) -> Result<()> {
    check_not_empty(x, name)?;
    check_finite(x, name)
}

/// A later batch (transform, partial fit, inverse) must be non-empty, have the fitted width
/// (`DimensionMismatch`) and be finite.
pub(crate) fn check_batch(x: &ArrayView2<f64>, n_features: usize) -> Result<()> {
    check_not_empty(x, "X")?;
    if x.ncols() != n_features {
        return Err(Error::dimension_mismatch(n_features, x.ncols()));
    }
    check_finite(x, "X")
}

/// Column moments of `x` with the input checks folded in: NaN or infinity in a column makes its
/// moments non-finite, so the full scan that names the position runs only on failure.
pub(crate) fn checked_column_moments(x: &ArrayView2<f64>) -> Result<Vec<Moments>> {
    check_not_empty(x, "X")?;
    let moments = reduction::column_moments(*x);
    if moments
        .iter()
        .any(|m| !(m.mean.is_finite() && m.m2.is_finite()))
    {
        check_finite(x, "X")?;
        return Err(Error::invalid_input(
            "X has values too large for float64: a column's variance overflows",
        ));
    }
    Ok(moments)
}

/// The fitted state, or the not-fitted error for `model`.
pub(crate) fn fitted<'a, T>(state: &'a Option<T>, model: &'static str) -> Result<&'a T> {
    state.as_ref().ok_or(Error::NotFitted(model))
}

/// A loaded model whose fitted state is inconsistent (a corrupted or hand-edited file).
pub(crate) fn corrupt(model: &str, what: &str) -> Error {
    Error::Io(IoError::ModelStructureMismatch(format!(
        "the saved {model} is corrupt: {what}"
    )))
}

/// The counts of a loaded model: no samples and no state before a fit; after one, at least one
/// feature and a sample count in `1..=isize::MAX` (so later fits can add to it without
/// overflowing). Returns the feature count of a fitted model.
pub(crate) fn check_fit_counts(
    model: &str,
    n_samples_seen: usize,
    n_features: Option<usize>,
) -> Result<Option<usize>> {
    match n_features {
        None if n_samples_seen == 0 => Ok(None),
        None => Err(corrupt(model, "samples counted but no fitted state")),
        Some(0) => Err(corrupt(model, "fitted on no features")),
        Some(_) if n_samples_seen == 0 || n_samples_seen > isize::MAX as usize => {
            Err(corrupt(model, "an impossible sample count"))
        }
        Some(d) => Ok(Some(d)),
    }
}

/// A fitted per-feature vector of a loaded model must have one finite entry per feature and
/// satisfy `ok` (e.g. a positive scale).
pub(crate) fn check_fitted_vector(
    model: &str,
    name: &str,
    v: &Array1<f64>,
    n_features: usize,
    ok: impl Fn(f64) -> bool,
) -> Result<()> {
    if v.len() != n_features {
        return Err(corrupt(
            model,
            &format!("`{name}` has {} entries for {n_features} features", v.len()),
        ));
    }
    if !v.iter().all(|&x| x.is_finite() && ok(x)) {
        return Err(corrupt(model, &format!("`{name}` holds an invalid value")));
    }
    Ok(())
}

/// Save/load with the original crate's names, and a decoder that validates the whole fitted
/// state, so a damaged file is refused at load instead of failing (or panicking) in transform.
pub trait CheckedPersist: Persist {
    /// Whether the hyper-parameters and fitted state are consistent.
    fn validate(&self) -> Result<()>;

    /// Decode and validate.
    fn from_bytes_checked(bytes: &[u8]) -> Result<Self> {
        let model = Self::from_bytes(bytes)?;
        model.validate()?;
        Ok(model)
    }
}

/// Whether `model`, saved and decoded again, is refused by [`CheckedPersist::from_bytes_checked`]
/// (tests of a damaged fitted state).
#[cfg(test)]
pub(crate) fn refused_at_load<M: CheckedPersist>(model: &M) -> bool {
    M::from_bytes_checked(&model.to_bytes().unwrap()).is_err()
}

/// Every single-byte corruption of `saved` (three bit patterns per byte) is refused at load,
/// or else handed to `exercise`, which must be able to use the model without panicking.
#[cfg(test)]
pub(crate) fn exercise_byte_corruptions<M: CheckedPersist>(saved: &[u8], exercise: impl Fn(&M)) {
    for i in 0..saved.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bytes = saved.to_vec();
            bytes[i] ^= flip;
            if let Ok(model) = M::from_bytes_checked(&bytes) {
                exercise(&model);
            }
        }
    }
}

/// `save_to_path` / `load_from_path` (postcard binary, validated on load) and the
/// `Fit` / `Transform` / `FitTransform` trait impls, all forwarding to the scaler's own methods.
///
/// With `map over $width` also `transform` (documented by the attributes given) and
/// `fit_transform`: the fitted state, `$width` of it telling the feature count a batch must
/// have, through the scaler's own `map(&self, &state, x)`.
macro_rules! scaler_common {
    ($model:ty, map over $width:ident, $(#[$transform_doc:meta])*) => {
        impl $model {
            $(#[$transform_doc])*
            pub fn transform<S: ndarray::Data<Elem = f64>>(
                &self,
                x: &ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<ndarray::Array2<f64>> {
                let state = $crate::utils::scaling::fitted(&self.state, NAME)?;
                $crate::utils::scaling::check_batch(&x.view(), state.$width.len())?;
                Ok(self.map(state, x.view()))
            }

            /// Fit, then transform the same data (validated once).
            pub fn fit_transform<S: ndarray::Data<Elem = f64>>(
                &mut self,
                x: &ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<ndarray::Array2<f64>> {
                self.fit(x)?;
                let state = $crate::utils::scaling::fitted(&self.state, NAME)?;
                Ok(self.map(state, x.view()))
            }
        }

        $crate::utils::scaling::scaler_common!($model);
    };
    ($model:ty) => {
        impl $model {
            /// Write the scaler (hyper-parameters and fitted state) to `path`.
            pub fn save_to_path(&self, path: &str) -> $crate::error::Result<()> {
                $crate::persistence::Persist::save(self, path)
            }

            /// Read a scaler written by [`save_to_path`](Self::save_to_path); a file whose
            /// fitted state is inconsistent is refused.
            pub fn load_from_path(path: &str) -> $crate::error::Result<Self> {
                $crate::utils::scaling::CheckedPersist::from_bytes_checked(&std::fs::read(path)?)
            }
        }

        impl<'a, S: ndarray::Data<Elem = f64>>
            $crate::traits::Fit<&'a ndarray::ArrayBase<S, ndarray::Ix2>> for $model
        {
            fn fit(
                &mut self,
                x: &'a ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<&mut Self> {
                <$model>::fit(self, x)
            }
        }

        impl<'a, S: ndarray::Data<Elem = f64>>
            $crate::traits::Transform<&'a ndarray::ArrayBase<S, ndarray::Ix2>> for $model
        {
            type Output = ndarray::Array2<f64>;
            fn transform(
                &self,
                x: &'a ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<ndarray::Array2<f64>> {
                <$model>::transform(self, x)
            }
        }

        impl<'a, S: ndarray::Data<Elem = f64>>
            $crate::traits::FitTransform<&'a ndarray::ArrayBase<S, ndarray::Ix2>> for $model
        {
            type Output = ndarray::Array2<f64>;
            fn fit_transform(
                &mut self,
                x: &'a ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<ndarray::Array2<f64>> {
                <$model>::fit_transform(self, x)
            }
        }
    };
}

pub(crate) use scaler_common;

/// An N-d array as a stack of matrices `(batch, rows, cols)`: a row is a lane along the last
/// axis, a column one along the second to last, and 1-D (or 0-D) data is a single row. A 2-D
/// input is viewed in place (any strides); other ranks are brought to standard layout first.
pub(crate) fn as_stack<S, D>(data: &ArrayBase<S, D>) -> CowArray<'_, f64, Ix3>
where
    S: Data<Elem = f64>,
    D: Dimension,
{
    if let Ok(m) = data.view().into_dimensionality::<Ix2>() {
        return CowArray::from(m.insert_axis(Axis(0)));
    }
    let shape = data.shape();
    let n = shape.len();
    let (b, r, c) = match n {
        0 => (1, 1, 1),
        1 => (1, 1, shape[0]),
        _ => (shape[..n - 2].iter().product(), shape[n - 2], shape[n - 1]),
    };
    let owned = data.as_standard_layout().into_owned();
    let stack = owned
        .into_shape_with_order((b, r, c))
        .expect("a standard-layout array reshapes to (batch, rows, cols)");
    CowArray::from(stack)
}

/// All the rows of a stack as one `(batch * rows, cols)` matrix (no copy: a stack of more
/// than one matrix is always in standard layout).
pub(crate) fn stack_rows<'a>(stack: &'a CowArray<'_, f64, Ix3>) -> ArrayView2<'a, f64> {
    let (b, r, c) = stack.dim();
    if b == 1 {
        return stack.index_axis(Axis(0), 0);
    }
    stack
        .view()
        .into_shape_with_order((b * r, c))
        .expect("a stack of several matrices is in standard layout")
}

/// The checks of the one-shot functions: `EmptyInput`, `InvalidInput` for a per-lane axis on
/// data with fewer than 2 dimensions, `NonFinite`.
pub(crate) fn check_nd<S, D>(data: &ArrayBase<S, D>, per_lane: bool) -> Result<()>
where
    S: Data<Elem = f64>,
    D: Dimension,
{
    if data.is_empty() {
        return Err(Error::empty_input(format!(
            "data has shape {:?}",
            data.shape()
        )));
    }
    if per_lane && data.ndim() < 2 {
        return Err(Error::invalid_input(format!(
            "a row or column axis needs data with at least 2 dimensions, got {}",
            data.ndim()
        )));
    }
    let finite = match data.as_slice_memory_order() {
        Some(s) => validation::all_finite(s),
        None => data.iter().all(|v| v.is_finite()),
    };
    if !finite {
        return Err(Error::non_finite("data"));
    }
    Ok(())
}

/// Rebuild an `(batch * rows, cols)` or `(batch, rows, cols)` result in the input's shape.
pub(crate) fn unstack<E, D>(out: Array<f64, E>, dim: D) -> Array<f64, D>
where
    E: Dimension,
    D: Dimension,
{
    out.into_shape_with_order(dim)
        .expect("results are in standard layout with the input's element count")
}
