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
    texels_per_item: usize,
    bytes_per_texel: usize,
    capacity: usize,
    /// The most items the texture may hold (the renderer's texture size; see
    /// `vat_core::crowd::item_limit`): growth stops there, callers refuse more.
    max_items: usize,
    bytes: PackedByteArray,
    texture: Option<Gd<ImageTexture>>,
    changed: bool,
    /// Bytes handed to the engine by every upload so far.
    sent: u64,
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
            texels_per_item,
            bytes_per_texel,
            capacity: 0,
            max_items: vat_core::crowd::item_limit(texels_per_item as u32, max_texture_size),
            bytes: PackedByteArray::new(),
            texture: None,
            changed: true,
            sent: 0,
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
        // Whole rows: with 3 texels per item a row holds a few texels more than its items.
        let rows = (self.capacity * self.texels_per_item).div_ceil(DATA_TEXTURE_WIDTH as usize);
        self.bytes
            .resize(rows * DATA_TEXTURE_WIDTH as usize * self.bytes_per_texel);
        self.texture = None;
        true
    }

    /// Items the bytes have room for.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The bytes for a writer that tells whether it changed them: call
    /// [`DataTexture::mark_changed`] if it did, else the next upload is skipped.
    pub fn bytes_mut_untracked(&mut self) -> &mut [u8] {
        self.bytes.as_mut_slice()
    }

    /// Makes the next upload send the bytes.
    pub fn mark_changed(&mut self) {
        self.changed = true;
    }

    /// The bytes viewed as f32, for a writer that tells whether it changed them (see
    /// [`DataTexture::bytes_mut_untracked`]).
    pub fn floats_mut_untracked(&mut self) -> &mut [f32] {
        let bytes = self.bytes.as_mut_slice();
        // SAFETY: every bit pattern is a valid f32; align_to_mut returns only the aligned middle.
        let (head, floats, _) = unsafe { bytes.align_to_mut::<f32>() };
        assert!(
            head.is_empty(),
            "Godot allocates packed arrays 4-byte aligned"
        );
        floats
    }

    /// The bytes viewed as f32, to read.
    pub fn floats(&self) -> &[f32] {
        let bytes = self.bytes.as_slice();
        // SAFETY: as in floats_mut_untracked.
        let (head, floats, _) = unsafe { bytes.align_to::<f32>() };
        assert!(
            head.is_empty(),
            "Godot allocates packed arrays 4-byte aligned"
        );
        floats
    }

    /// Bytes handed to the engine by every upload so far.
    pub fn sent_bytes(&self) -> u64 {
        self.sent
    }

    /// The texture's RenderingServer RID, once uploaded.
    pub fn texture_rid(&self) -> Option<Rid> {
        self.texture.as_ref().map(|t| t.get_rid())
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
        // A new image per upload, sharing the bytes (copy-on-write): with a separate render
        // thread the engine holds it until that thread uploads it, so reusing one image (as this
        // did) let the next frame change it under the queued upload. Once the engine lets it go,
        // the bytes are ours alone again and writing them next frame copies nothing.
        let image = Image::create_from_data(width, height, false, self.format, &self.bytes)
            .expect("a data image of whole rows");
        self.sent += self.bytes.len() as u64;
        match &mut self.texture {
            Some(texture) => {
                texture.update(&image);
                None
            }
            None => {
                let texture = ImageTexture::create_from_image(&image).expect("valid data image");
                self.texture = Some(texture.clone());
                Some(texture)
            }
        }
    }
}

/// Every actor's whole record (placement and state, see `vat_core::crowd`) on the CPU, written in
/// place by the crowd calls; `vat_core::crowd` copies it into the placement and state
/// textures at the next upload: all of it after a write through [`RecordStore::floats_mut`], or
/// only what the battle frame's calls name (see [`Written`]).
pub struct RecordStore {
    floats: Vec<f32>,
    floats_per_item: usize,
    /// Written anywhere since the last split.
    dirty: bool,
    /// Placements written into the placement texture as well, since the last upload.
    moved: bool,
    /// Actors whose states alone were written since the last upload (only while not `dirty`).
    listed: Vec<u32>,
    /// The first `behind` records' placements are behind the placement texture, where the
    /// placement writer put them (see `CrowdGpu::catch_up`).
    pub behind: usize,
}

/// What was written since the last upload ([`RecordStore::take_written`]).
pub enum Written {
    /// Nothing.
    Nothing,
    /// Any record, anywhere: split them all. `moved`: the placement writer changed the
    /// placement texture before (the split finds no change there, but it must go up).
    All { moved: bool },
    /// Placements straight into the placement texture as well (`moved`), and the states of the
    /// actors `listed` (see `vat_core::crowd::RecentStates::apply_listed`).
    Listed { moved: bool, listed: Vec<u32> },
}

/// Past this many listed actors per actor, a split costs less than the list.
const LISTED_SHARE: usize = 8;

impl RecordStore {
    /// A store of records of `texels_per_item` RGBA32F texels.
    pub fn new(texels_per_item: usize) -> Self {
        Self {
            floats: Vec::new(),
            floats_per_item: texels_per_item * 4,
            dirty: true,
            moved: false,
            listed: Vec::new(),
            behind: 0,
        }
    }

    /// Makes room for `items` records.
    pub fn reserve(&mut self, items: usize) {
        let needed = items * self.floats_per_item;
        if self.floats.len() < needed {
            let cap =
                vat_core::crowd::grow_capacity(self.floats.len() / self.floats_per_item, items);
            self.floats.resize(cap * self.floats_per_item, 0.0);
        }
    }

    /// The records, to write in place anywhere; the next upload splits them all. Only for
    /// records caught up with the placement writer (`CrowdGpu::records_mut` sees to it).
    pub fn floats_mut(&mut self) -> &mut [f32] {
        debug_assert_eq!(self.behind, 0, "records caught up before a write");
        self.dirty = true;
        self.listed.clear();
        &mut self.floats
    }

    /// The records, for a writer that changes only the states of the actors `ids` (ids outside
    /// the crowd are ignored at upload): the next upload takes just those, unless the records
    /// are to be split anyway or the list grows past a split's cost for `actors`.
    pub fn states_mut(&mut self, ids: &[i32], actors: usize) -> &mut [f32] {
        if !self.dirty {
            if (self.listed.len() + ids.len()) * LISTED_SHARE > actors {
                self.dirty = true;
                self.listed.clear();
            } else {
                self.listed.extend(ids.iter().map(|&i| i as u32));
            }
        }
        &mut self.floats
    }

    /// Says the placement writer (`vat_core::crowd::RecentStates::move_actors`) put the
    /// placements of the first `n` actors into the placement texture, and whether that changed
    /// the texture.
    pub fn note_moved(&mut self, n: usize, changed: bool) {
        self.behind = n;
        self.moved |= changed;
    }

    /// True if nothing since the last upload calls for splitting every record.
    pub fn is_split(&self) -> bool {
        !self.dirty
    }

    /// The records, to read; their placements may be behind (see `behind`).
    pub fn floats(&self) -> &[f32] {
        &self.floats
    }

    /// The records to write, to catch them up with the placement writer (behind or not).
    pub fn floats_mut_catching_up(&mut self) -> &mut [f32] {
        &mut self.floats
    }

    /// What was written since the last call, and forgets it.
    pub fn take_written(&mut self) -> Written {
        let moved = std::mem::take(&mut self.moved);
        if std::mem::take(&mut self.dirty) {
            self.listed.clear();
            Written::All { moved }
        } else if moved || !self.listed.is_empty() {
            Written::Listed {
                moved,
                listed: std::mem::take(&mut self.listed),
            }
        } else {
            Written::Nothing
        }
    }
}
