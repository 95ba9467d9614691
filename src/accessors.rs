//! The original API's plain accessors, declared instead of written out: builder setters that
//! store one field as given (`with_tol(self, tol) -> Self`) and getters that copy one field
//! out (`get_tolerance(&self) -> f64`). Both are invoked inside an `impl` block. Setters that
//! check their value or convert it, and getters that compute, stay written out beside them.

/// `name(field: Type)` -> `pub fn name(mut self, field: Type) -> Self`, storing `field`.
macro_rules! builder_setters {
    ($($(#[$doc:meta])* $name:ident($field:ident: $t:ty)),* $(,)?) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $field: $t) -> Self {
                self.$field = $field;
                self
            }
        )*
    };
}
pub(crate) use builder_setters;

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
