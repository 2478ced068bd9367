//! Values of the client's generated types, made through their builders.
//!
//! The generated structs are `#[non_exhaustive]`: outside the client crate they are built, never
//! written as literals, so a member the vendor adds does not stop the mock from compiling. A
//! builder fails only when a member the description requires is not set; every call site here
//! sets the required members from the mock's own data, so a failure is a bug in the mock, found
//! by its first test, never something a request can cause.

use creditdata_client::types::error::ConversionError;

/// `.build().built()`: the value, or a panic naming the type and the missing member.
pub(crate) trait Built<T> {
    fn built(self) -> T;
}

impl<T> Built<T> for Result<T, ConversionError> {
    #[track_caller]
    fn built(self) -> T {
        self.unwrap_or_else(|e| {
            panic!(
                "the mock built a {} without a member the description requires ({e}): a bug in \
                 the mock",
                std::any::type_name::<T>()
            )
        })
    }
}
