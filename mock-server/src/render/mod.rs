//! File formats: PDF, xlsx workbooks, PNG/JPEG images and TSV.

pub mod font;
pub mod image;
pub mod pdf;
pub mod tsv;
pub mod xlsx;
