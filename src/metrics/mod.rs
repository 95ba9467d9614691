//! Evaluation metrics with the original crate's API: functions over `&ArrayBase` (any
//! storage) that return plain numbers and **panic** on bad input (mismatched lengths, empty
//! arrays, labels outside the expected set), with messages such as
//! `"dimension mismatch: expected 3, found 2"` or `"input is empty: ..."`.
//!
//! [`checked`] holds the scikit-learn-style functions (any [`Label`](crate::math::labels::Label)
//! type, scikit-learn's options and edge cases) that report bad input as
//! [`Error`](crate::error::Error) instead; the Python bindings use those, so Python never
//! sees a panic. The functions here validate in the original's terms and then run the same
//! computational cores.

pub mod checked;
pub mod classification;
pub mod clustering;
mod confusion_matrix;
mod multiclass_confusion_matrix;
pub mod regression;

pub use classification::*;
pub use clustering::*;
pub use regression::*;

use crate::error::{Error, Result};
use ndarray::{ArrayRef1, ArrayView1};

/// The original API reports bad input by panicking with the error's message.
#[track_caller]
pub(crate) fn or_panic<T>(r: Result<T>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// The original's check of two arrays describing the same samples: equal lengths (expected =
/// the first length), not empty.
pub(crate) fn check_pair_len(first: usize, second: usize) -> Result<()> {
    if first != second {
        return Err(Error::dimension_mismatch(first, second));
    }
    if first == 0 {
        return Err(Error::empty_input("metric inputs have no samples"));
    }
    Ok(())
}

/// Views of two 1-D arrays after [`check_pair_len`].
pub(crate) fn pair_views<'a, A>(
    a: &'a ArrayRef1<A>,
    b: &'a ArrayRef1<A>,
) -> Result<(ArrayView1<'a, A>, ArrayView1<'a, A>)> {
    check_pair_len(a.len(), b.len())?;
    Ok((a.view(), b.view()))
}
