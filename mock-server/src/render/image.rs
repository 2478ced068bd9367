//! Raster images for identity verifications and attachments: an RGB canvas with rectangles,
//! ellipses and a 5×7 bitmap font, encoded as PNG or JPEG.

/// An RGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

/// An RGB canvas.
pub struct Canvas {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
    clip: Option<(i64, i64, i64, i64)>,
}

/// Why an image could not be encoded (never expected for the canvases made here).
#[derive(Debug, thiserror::Error)]
#[error("image encoding failed: {0}")]
pub struct EncodeError(String);

impl Canvas {
    /// A canvas filled with `background`.
    pub fn new(width: u32, height: u32, background: Rgb) -> Self {
        let mut pixels = Vec::with_capacity((width * height * 3) as usize);
        for _ in 0..width * height {
            pixels.extend_from_slice(&[background.0, background.1, background.2]);
        }
        Canvas {
            width,
            height,
            pixels,
            clip: None,
        }
    }

    /// Restricts drawing to a rectangle (`None`: the whole canvas).
    pub fn clip(&mut self, clip: Option<(i64, i64, i64, i64)>) {
        self.clip = clip;
    }

    fn put(&mut self, x: i64, y: i64, color: Rgb) {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return;
        }
        if let Some((cx, cy, cw, ch)) = self.clip
            && (x < cx || y < cy || x >= cx + cw || y >= cy + ch)
        {
            return;
        }
        let at = ((y as usize) * self.width as usize + x as usize) * 3;
        self.pixels[at] = color.0;
        self.pixels[at + 1] = color.1;
        self.pixels[at + 2] = color.2;
    }

    /// A filled rectangle.
    pub fn rect(&mut self, x: i64, y: i64, width: i64, height: i64, color: Rgb) {
        for yy in y.max(0)..(y + height).min(i64::from(self.height)) {
            for xx in x.max(0)..(x + width).min(i64::from(self.width)) {
                self.put(xx, yy, color);
            }
        }
    }

    /// A rectangle outline.
    pub fn frame(&mut self, x: i64, y: i64, width: i64, height: i64, thickness: i64, color: Rgb) {
        self.rect(x, y, width, thickness, color);
        self.rect(x, y + height - thickness, width, thickness, color);
        self.rect(x, y, thickness, height, color);
        self.rect(x + width - thickness, y, thickness, height, color);
    }

    /// A filled ellipse centred at (`cx`, `cy`).
    pub fn ellipse(&mut self, cx: i64, cy: i64, rx: i64, ry: i64, color: Rgb) {
        let (rx, ry) = (rx.max(1), ry.max(1));
        for y in cy - ry..=cy + ry {
            for x in cx - rx..=cx + rx {
                let dx = (x - cx) as f64 / rx as f64;
                let dy = (y - cy) as f64 / ry as f64;
                if dx * dx + dy * dy <= 1.0 {
                    self.put(x, y, color);
                }
            }
        }
    }

    /// A vertical gradient over the whole canvas.
    pub fn vertical_gradient(&mut self, top: Rgb, bottom: Rgb) {
        let height = i64::from(self.height.max(1));
        for y in 0..height {
            let t = y as f64 / height as f64;
            let mix = |a: u8, b: u8| (f64::from(a) * (1.0 - t) + f64::from(b) * t) as u8;
            let color = Rgb(
                mix(top.0, bottom.0),
                mix(top.1, bottom.1),
                mix(top.2, bottom.2),
            );
            self.rect(0, y, i64::from(self.width), 1, color);
        }
    }

    /// Text in the 5×7 font, each font pixel `scale` pixels wide; upper-cased, accents dropped.
    pub fn text(&mut self, x: i64, y: i64, scale: i64, color: Rgb, text: &str) {
        let mut cursor = x;
        for c in text.chars() {
            let glyph = super::font::glyph(c);
            for (row, bits) in glyph.iter().enumerate() {
                for column in 0..5 {
                    if bits & (0x10 >> column) != 0 {
                        self.rect(
                            cursor + column * scale,
                            y + row as i64 * scale,
                            scale,
                            scale,
                            color,
                        );
                    }
                }
            }
            cursor += 6 * scale;
        }
    }

    /// Width of `text` in pixels at `scale`.
    pub fn text_width(text: &str, scale: i64) -> i64 {
        text.chars().count() as i64 * 6 * scale
    }

    /// The canvas as a PNG file.
    pub fn png(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder
                .write_header()
                .map_err(|e| EncodeError(e.to_string()))?;
            writer
                .write_image_data(&self.pixels)
                .map_err(|e| EncodeError(e.to_string()))?;
            writer.finish().map_err(|e| EncodeError(e.to_string()))?;
        }
        Ok(out)
    }

    /// The canvas as a JPEG file (quality 85).
    pub fn jpeg(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        let width = u16::try_from(self.width).map_err(|e| EncodeError(e.to_string()))?;
        let height = u16::try_from(self.height).map_err(|e| EncodeError(e.to_string()))?;
        jpeg_encoder::Encoder::new(&mut out, 85)
            .encode(&self.pixels, width, height, jpeg_encoder::ColorType::Rgb)
            .map_err(|e| EncodeError(e.to_string()))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_and_jpeg_encode() {
        let mut canvas = Canvas::new(64, 32, Rgb(250, 250, 250));
        canvas.text(2, 2, 1, Rgb(0, 0, 0), "ABC 123");
        canvas.ellipse(40, 16, 10, 8, Rgb(200, 10, 10));
        let png = canvas.png().expect("png");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        let jpeg = canvas.jpeg().expect("jpeg");
        assert!(jpeg.starts_with(&[0xFF, 0xD8]));
    }
}
