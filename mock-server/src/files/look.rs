//! What the generated files share: a country's colours and the error of a rendering that failed.

use crate::data::fnv1a;
use crate::problem::Problem;
use crate::render::image::Rgb;

/// The 500 of a file the mock could not render.
pub fn encode_failed(error: impl std::fmt::Display) -> Problem {
    Problem::internal(format!("the mock could not render the file: {error}"))
}

/// Light and dark colours of a country's documents.
pub fn palette(code: &str) -> (Rgb, Rgb) {
    match fnv1a(code.as_bytes()) % 4 {
        0 => (Rgb(226, 236, 246), Rgb(20, 60, 120)),
        1 => (Rgb(236, 244, 230), Rgb(30, 90, 50)),
        2 => (Rgb(246, 236, 228), Rgb(120, 40, 30)),
        _ => (Rgb(238, 232, 246), Rgb(70, 40, 110)),
    }
}
