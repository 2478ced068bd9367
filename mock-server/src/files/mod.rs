//! The binary and text files behind the datasets: providers' original reports (source files),
//! identity-verification images and the subject's attachments. Each is generated once per
//! session from the dossier and kept, so listed sizes and downloads always agree. What they
//! share (colours, the error of a failed rendering) is [`look`].

mod attachment;
mod look;
mod source_file;
mod verification_image;

pub use attachment::attachment;
pub use source_file::source_file;
pub use verification_image::verification_image;
