//! What the engines' options share: the label contract of the binary classifiers, and the one
//! byte a pair of options takes in the saved format.
//!
//! Each engine option replaced one `bool` that told the original API's fit from scikit-learn's.
//! Where two options took one flag's place, they are stored as one byte that reads as that
//! flag for the two combinations it stood for (0: every option at its first variant, the
//! original's; 1: every option at its second, scikit-learn's), so files and pickles written
//! before load unchanged; the other combinations are `2 + bits`.

use serde::{Deserialize, Serialize};

/// Which labels a classifier's `fit` takes, and in whose terms it refuses bad data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClassLabels {
    /// The original API's: 0 and 1 only (classes `[0, 1]`); bad data is `EmptyInput`,
    /// `NonFinite`, `DimensionMismatch`, a label outside {0, 1} `InvalidInput`.
    ZeroOne,
    /// scikit-learn's: any finite labels, sorted distinct classes (at least two), refused in
    /// scikit-learn's words.
    Observed,
}

/// The byte of two two-variant options, `first` and `second` giving their variant index.
pub(crate) fn pair_to_byte(first: bool, second: bool) -> u8 {
    match (first, second) {
        (false, false) => 0,
        (true, true) => 1,
        (true, false) => 2,
        (false, true) => 3,
    }
}

/// The variant indices stored by [`pair_to_byte`].
pub(crate) fn byte_to_pair(byte: u8, what: &str) -> Result<(bool, bool), String> {
    match byte {
        0 => Ok((false, false)),
        1 => Ok((true, true)),
        2 => Ok((true, false)),
        3 => Ok((false, true)),
        other => Err(format!("corrupt {what} options: unknown code {other}")),
    }
}

/// One engine-options struct of two two-variant fields, saved as the byte of [`pair_to_byte`]:
/// the struct, its `ORIGINAL` (every field at its first variant) and `SCIKIT_LEARN` (every
/// field at its second) constants, and the `u8` conversions serde goes through (`$what`
/// names the model in the message refusing an unknown byte).
macro_rules! paired_options {
    (
        $(#[$meta:meta])*
        pub struct $name:ident ($what:literal) {
            pub $first:ident: $first_ty:ident { $first_a:ident, $first_b:ident },
            pub $second:ident: $second_ty:ident { $second_a:ident, $second_b:ident },
        }
        $(#[$original_doc:meta])*
        ORIGINAL;
        $(#[$sklearn_doc:meta])*
        SCIKIT_LEARN;
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[serde(into = "u8", try_from = "u8")]
        pub struct $name {
            pub $first: $first_ty,
            pub $second: $second_ty,
        }

        impl $name {
            $(#[$original_doc])*
            pub const ORIGINAL: Self = Self {
                $first: $first_ty::$first_a,
                $second: $second_ty::$second_a,
            };
            $(#[$sklearn_doc])*
            pub const SCIKIT_LEARN: Self = Self {
                $first: $first_ty::$first_b,
                $second: $second_ty::$second_b,
            };
        }

        impl From<$name> for u8 {
            fn from(o: $name) -> u8 {
                $crate::machine_learning::options::pair_to_byte(
                    o.$first == $first_ty::$first_b,
                    o.$second == $second_ty::$second_b,
                )
            }
        }

        impl TryFrom<u8> for $name {
            type Error = String;
            fn try_from(byte: u8) -> std::result::Result<Self, String> {
                let (first, second) = $crate::machine_learning::options::byte_to_pair(byte, $what)?;
                Ok(Self {
                    $first: if first { $first_ty::$first_b } else { $first_ty::$first_a },
                    $second: if second { $second_ty::$second_b } else { $second_ty::$second_a },
                })
            }
        }
    };
}
pub(crate) use paired_options;

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes a value takes in a saved model.
    fn saved<T: Serialize>(value: &T) -> Vec<u8> {
        postcard::to_allocvec(value).unwrap()
    }

    #[test]
    fn every_pair_round_trips_and_the_flag_values_read_as_before() {
        for first in [false, true] {
            for second in [false, true] {
                let b = pair_to_byte(first, second);
                assert_eq!(byte_to_pair(b, "t").unwrap(), (first, second));
            }
        }
        // A saved `false` / `true` flag is the byte 0 / 1 in postcard.
        assert_eq!(saved(&false), [0]);
        assert_eq!(saved(&true), [1]);
        assert_eq!(saved(&1u8), [1]);
        assert!(byte_to_pair(4, "t").is_err());
    }

    #[test]
    fn each_doors_options_take_the_byte_of_the_flag_they_replaced() {
        use crate::machine_learning::lda::LdaOptions;
        use crate::machine_learning::linear_svc::LinearSvcSolver;
        use crate::machine_learning::logistic_regression::LogisticOptions;
        use crate::machine_learning::svc::SvcOptions;
        assert_eq!(saved(&LinearSvcSolver::MinibatchSgd), [0]);
        assert_eq!(saved(&LinearSvcSolver::Liblinear), [1]);
        assert_eq!(saved(&LdaOptions::ORIGINAL), [0]);
        assert_eq!(saved(&LdaOptions::SCIKIT_LEARN), [1]);
        assert_eq!(saved(&LogisticOptions::ORIGINAL), [0]);
        assert_eq!(saved(&LogisticOptions::SCIKIT_LEARN), [1]);
        assert_eq!(saved(&SvcOptions::ORIGINAL), [0]);
        assert_eq!(saved(&SvcOptions::SCIKIT_LEARN), [1]);
        let o: LdaOptions = postcard::from_bytes(&[0]).unwrap();
        assert_eq!(o, LdaOptions::ORIGINAL);
        let o: SvcOptions = postcard::from_bytes(&[1]).unwrap();
        assert_eq!(o, SvcOptions::SCIKIT_LEARN);
        assert!(postcard::from_bytes::<LogisticOptions>(&[7]).is_err());
    }
}
