//! Source files: the providers' original reports, listed and with their content.

use crate::built::Built;
use creditdata_client::types::{SourceFile, SourceFileContent};
use uuid::Uuid;

use super::View;
use crate::catalog::Dataset;
use crate::files;

impl View<'_> {
    /// `GET .../source-files`
    pub fn source_files(&self) -> Vec<SourceFile> {
        self.delivered(Dataset::SourceFiles)
            .into_iter()
            .map(|(data, provider)| {
                let file = files::source_file(self.dossier, data, provider);
                SourceFile::builder()
                    .id(file.id)
                    .source_id(Some(provider.id.to_owned()))
                    .type_(Some(file.kind.to_owned()))
                    .name(Some(file.name.clone()))
                    .size_in_bytes(Some(file.content.len() as i64))
                    .build()
                    .built()
            })
            .collect()
    }

    /// `GET .../source-files/{id}/content`
    pub fn source_file_content(&self, id: Uuid) -> Option<SourceFileContent> {
        use base64::Engine as _;
        self.delivered(Dataset::SourceFiles)
            .into_iter()
            .map(|(data, provider)| (provider, files::source_file(self.dossier, data, provider)))
            .find(|(_, file)| file.id == id)
            .map(|(provider, file)| {
                SourceFileContent::builder()
                    .source_id(Some(provider.id.to_owned()))
                    .type_(Some(file.kind.to_owned()))
                    .name(Some(file.name.clone()))
                    .size_in_bytes(Some(file.content.len() as i64))
                    .content_base64(Some(
                        base64::engine::general_purpose::STANDARD.encode(&*file.content),
                    ))
                    .build()
                    .built()
            })
    }
}
