//! A data texture whose CPU-side bytes are reused from frame to frame.

use godot::classes::image::Format;
use godot::classes::{Image, ImageTexture};
use godot::prelude::*;
use vat_core::layout::DATA_TEXTURE_WIDTH;

/// Bytes written in place each frame and pushed with one `ImageTexture.update()`, only if they
/// changed since the last upload. The texture is re-created only when capacity grows (see
/// [`DataTexture::reserve`]).
pub struct DataTexture {
    format: Format,
    bytes_per_item: usize,
    texels_per_item: usize,
    bytes_per_texel: usize,
    capacity: usize,
    /// The most items the texture may hold (the renderer's texture size; see
    /// `vat_core::crowd::item_limit`): growth stops there, callers refuse more.
    max_items: usize,
    bytes: PackedByteArray,
    /// `bytes`' storage. A packed array's `as_mut_slice` makes three calls into Godot, each with
    /// gdext's main-thread check, which the immediate mode would pay per `add_actor` and per
    /// `add_model`; this pointer is taken once instead, after each resize and each upload (the
    /// only times the storage can move or be shared), while `bytes` is held by nothing else.
    data: *mut u8,
    image: Gd<Image>,
    texture: Option<Gd<ImageTexture>>,
    tiny: PackedByteArray,
    changed: bool,
}

impl DataTexture {
    /// A texture for items of `texels_per_item` texels of `format` (`bytes_per_texel` bytes each),
    /// never higher than `max_texture_size` rows.
    pub fn new(
        format: Format,
        bytes_per_texel: usize,
        texels_per_item: usize,
        min_items: usize,
        max_texture_size: u32,
    ) -> Self {
        let mut t = Self {
            format,
            bytes_per_item: bytes_per_texel * texels_per_item,
            texels_per_item,
            bytes_per_texel,
            capacity: 0,
            max_items: vat_core::crowd::item_limit(texels_per_item as u32, max_texture_size),
            bytes: PackedByteArray::new(),
            data: std::ptr::null_mut(),
            image: Image::new_gd(),
            texture: None,
            tiny: PackedByteArray::from(vec![0u8; bytes_per_texel].as_slice()),
            changed: true,
        };
        t.reserve(min_items);
        t
    }

    /// Makes room for `items`: whole rows, growing by at least half each time, so a crowd of a
    /// steady size uploads no more rows than it uses and a growing one re-creates its texture
    /// rarely. Returns true if it grew (the texture object will be replaced at the next upload,
    /// so materials must be re-bound).
    pub fn reserve(&mut self, items: usize) -> bool {
        if items <= self.capacity && self.capacity > 0 {
            return false;
        }
        let items_per_row = DATA_TEXTURE_WIDTH as usize / self.texels_per_item;
        debug_assert!(items <= self.max_items, "callers check the item limit");
        // Growth stops at the limit, so the texture never outgrows what the renderer takes.
        let wanted = items.max(self.capacity + self.capacity / 2).max(1);
        let rounded = wanted.div_ceil(items_per_row) * items_per_row;
        self.capacity = rounded.min(self.max_items.max(items));
        self.bytes.resize(self.capacity * self.bytes_per_item);
        self.refresh_data();
        self.texture = None;
        true
    }

    /// Takes `bytes`' storage pointer again (it moves on a resize; an upload shares and releases it).
    fn refresh_data(&mut self) {
        self.data = self.bytes.as_mut_slice().as_mut_ptr();
    }

    /// The bytes through the cached pointer, with no call into Godot.
    fn slice(&mut self) -> &mut [u8] {
        let len = self.capacity * self.bytes_per_item;
        if len == 0 {
            return &mut [];
        }
        // SAFETY: `data` points at `bytes`' `len` initialised bytes: it is taken after every
        // resize (`reserve`) and after every upload, `bytes` is shared with nothing in between
        // (`upload` takes the image's share back before returning), so the storage neither moves
        // nor is aliased, and `&mut self` makes this the only borrow.
        unsafe { std::slice::from_raw_parts_mut(self.data, len) }
    }

    /// The bytes, to write in place (no copy: nothing else holds them between uploads); the next
    /// upload sends them.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.changed = true;
        self.slice()
    }

    /// The bytes for a writer that tells whether it changed them: call
    /// [`DataTexture::mark_changed`] if it did, else the next upload is skipped.
    pub fn bytes_mut_untracked(&mut self) -> &mut [u8] {
        self.slice()
    }

    /// Makes the next upload send the bytes.
    pub fn mark_changed(&mut self) {
        self.changed = true;
    }

    /// The bytes viewed as f32 (for RGBAF textures); the next upload sends them.
    pub fn floats_mut(&mut self) -> &mut [f32] {
        self.changed = true;
        let bytes = self.slice();
        // SAFETY: every bit pattern is a valid f32; align_to_mut returns only the aligned middle.
        let (head, floats, _) = unsafe { bytes.align_to_mut::<f32>() };
        assert!(
            head.is_empty(),
            "Godot allocates packed arrays 4-byte aligned"
        );
        floats
    }

    /// Pushes the bytes to the GPU with one `ImageTexture.update()` (or creates the texture after
    /// growth), unless nothing wrote them since the last upload. Returns the texture if it is a
    /// new object.
    pub fn upload(&mut self) -> Option<Gd<ImageTexture>> {
        if !self.changed && self.texture.is_some() {
            return None;
        }
        self.changed = false;
        let width = DATA_TEXTURE_WIDTH as i32;
        let texels = self.capacity * self.texels_per_item;
        let height = texels.div_ceil(DATA_TEXTURE_WIDTH as usize) as i32;
        debug_assert_eq!(
            self.bytes.len(),
            width as usize * height as usize * self.bytes_per_texel
        );
        self.image
            .set_data(width, height, false, self.format, &self.bytes);
        let created = match &mut self.texture {
            Some(texture) => {
                texture.update(&self.image);
                None
            }
            None => {
                let texture =
                    ImageTexture::create_from_image(&self.image).expect("valid data image");
                self.texture = Some(texture.clone());
                Some(texture)
            }
        };
        // Let go of the image's share of the bytes, so writing them next frame copies nothing.
        self.image.set_data(1, 1, false, self.format, &self.tiny);
        self.refresh_data();
        created
    }
}
