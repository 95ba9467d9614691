//! The original API's plain accessors, declared instead of written out: builder setters that
//! store one field as given (`with_tol(self, tol) -> Self`), the same followed by the model's
//! `check_params`, getters that copy one field out (`get_tolerance(&self) -> f64`), and
//! getters of the fitted state (`None` before fit). All are invoked inside an `impl` block.
//! Setters that convert their value, and getters that compute, stay written out beside them.

/// `name(field: Type)` -> `pub fn name(mut self, field: Type) -> Self`, storing `field`;
/// `name(field: Some(Type))` takes a `Type` and stores `Some(field)` in an `Option` field.
macro_rules! builder_setters {
    ($($(#[$doc:meta])* $name:ident($field:ident: $($arg:tt)+)),* $(,)?) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $field: $crate::accessors::setter_argument!($($arg)+)) -> Self {
                self.$field = $crate::accessors::stored_value!($field: $($arg)+);
                self
            }
        )*
    };
}
pub(crate) use builder_setters;

/// The entries of [`builder_setters`], each setter then running the model's `check_params`:
/// `pub fn name(mut self, field: Type) -> Result<Self>`, refusing what the check refuses
/// (the field is checked with the others, so a rule relating two of them applies here too).
macro_rules! checked_setters {
    ($($(#[$doc:meta])* $name:ident($field:ident: $($arg:tt)+)),* $(,)?) => {
        $(
            $(#[$doc])*
            pub fn $name(
                mut self,
                $field: $crate::accessors::setter_argument!($($arg)+),
            ) -> $crate::error::Result<Self> {
                self.$field = $crate::accessors::stored_value!($field: $($arg)+);
                self.check_params()?;
                Ok(self)
            }
        )*
    };
}
pub(crate) use checked_setters;

/// The argument type of a setter entry: `Type`, or the `Type` of `Some(Type)`.
macro_rules! setter_argument {
    (Some($t:ty)) => {
        $t
    };
    ($t:ty) => {
        $t
    };
}
pub(crate) use setter_argument;

/// What a setter entry stores: its argument, wrapped in `Some` for a `Some(Type)` entry.
macro_rules! stored_value {
    ($value:ident: Some($t:ty)) => {
        Some($value)
    };
    ($value:ident: $t:ty) => {
        $value
    };
}
pub(crate) use stored_value;

/// `name -> field: Type` -> `pub fn name(&self) -> Type`, a copy of `field`.
macro_rules! field_getters {
    ($($(#[$doc:meta])* $name:ident -> $field:ident: $t:ty),* $(,)?) => {
        $(
            $(#[$doc])*
            #[inline]
            pub fn $name(&self) -> $t {
                self.$field
            }
        )*
    };
}
pub(crate) use field_getters;

/// Getters of fitted results, each `None` before fit, in one of two layouts:
///
/// * `fitted_getters! { state; ... }`: fields of the fitted state the model keeps in its
///   `Option` field `state`;
/// * `fitted_getters! { self once marker; ... }`: the model's own fields, which a fit sets
///   together with its `Option` field `marker`.
///
/// `name -> &field: Type` lends the field (`Option<&Type>`; in the second layout the field
/// is itself an `Option<Type>`), `name -> field: Type` copies it (`Option<Type>`).
macro_rules! fitted_getters {
    (@getter $layout:tt;) => {};
    (
        @getter $layout:tt;
        $(#[$doc:meta])* $name:ident -> &$field:ident: $t:ty $(, $($rest:tt)*)?
    ) => {
        $(#[$doc])*
        pub fn $name(&self) -> Option<&$t> {
            $crate::accessors::fitted_getters!(@lend self $layout $field)
        }
        $crate::accessors::fitted_getters!(@getter $layout; $($($rest)*)?);
    };
    (
        @getter $layout:tt;
        $(#[$doc:meta])* $name:ident -> $field:ident: $t:ty $(, $($rest:tt)*)?
    ) => {
        $(#[$doc])*
        pub fn $name(&self) -> Option<$t> {
            $crate::accessors::fitted_getters!(@copy self $layout $field)
        }
        $crate::accessors::fitted_getters!(@getter $layout; $($($rest)*)?);
    };
    (@lend $model:ident [$state:ident] $field:ident) => {
        $model.$state.as_ref().map(|state| &state.$field)
    };
    (@copy $model:ident [$state:ident] $field:ident) => {
        $model.$state.as_ref().map(|state| state.$field)
    };
    (@lend $model:ident [once $marker:ident] $field:ident) => {
        $model.$field.as_ref()
    };
    (@copy $model:ident [once $marker:ident] $field:ident) => {
        $model.$marker.as_ref().map(|_| $model.$field)
    };
    (self once $marker:ident; $($getters:tt)*) => {
        $crate::accessors::fitted_getters!(@getter [once $marker]; $($getters)*);
    };
    ($state:ident; $($getters:tt)*) => {
        $crate::accessors::fitted_getters!(@getter [$state]; $($getters)*);
    };
}
pub(crate) use fitted_getters;
