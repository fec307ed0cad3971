//! The recent-state texture on the GPU (see `vat_core::crowd`): a `Texture2DArray` of
//! one-row layers (as many as the crowd uses, at most `RECENT_STATE_LAYERS`), each updated on
//! its own with
//! `ImageTextureLayered.update_layer()`, so a frame where a few actors change clip sends one or
//! two 64 KiB layers instead of every actor's state.

use godot::classes::image::Format;
use godot::classes::{Image, Texture2DArray};
use godot::prelude::*;
use vat_core::crowd::{RecentStates, LAYER_BYTES, LAYER_TEXELS};

/// The slots and the texture that holds them.
pub struct RecentTexture {
    /// The slots and their texels, written by the record split.
    pub states: RecentStates,
    texture: Option<Gd<Texture2DArray>>,
    /// Layers of `texture`.
    layer_count: usize,
    /// Bytes handed to the engine so far.
    sent: u64,
}

impl RecentTexture {
    /// No slots in use and no texture yet (made at the first upload).
    pub fn new() -> Self {
        Self {
            states: RecentStates::new(),
            texture: None,
            layer_count: 0,
            sent: 0,
        }
    }

    /// Uploads the layers whose bit is set in `layers` (all of them when the texture is made, with
    /// `layer_count` layers, or made again because the crowd grew past its layers). Returns the
    /// texture if it is a new object, to bind to the materials.
    pub fn upload(&mut self, layers: u32, layer_count: usize) -> Option<Gd<Texture2DArray>> {
        if layers == 0 {
            return None;
        }
        let needed = layer_count.max(32 - layers.leading_zeros() as usize);
        if self.layer_count < needed {
            self.texture = None;
        }
        let image = |states: &RecentStates, layer: usize| {
            let floats = states.layer(layer);
            // SAFETY: f32 has no padding and any byte view of it is valid; the slice covers
            // exactly the floats' bytes.
            let bytes = unsafe {
                std::slice::from_raw_parts(floats.as_ptr().cast::<u8>(), floats.len() * 4)
            };
            Image::create_from_data(
                LAYER_TEXELS as i32,
                1,
                false,
                Format::RGBAF,
                &PackedByteArray::from(bytes),
            )
            .expect("a recent-state layer is one whole RGBAF row")
        };
        match &mut self.texture {
            Some(texture) => {
                for layer in 0..self.layer_count {
                    if layers & (1 << layer) != 0 {
                        texture.update_layer(&image(&self.states, layer), layer as i32);
                        self.sent += LAYER_BYTES as u64;
                    }
                }
                None
            }
            None => {
                let images: Array<Gd<Image>> =
                    (0..needed).map(|l| image(&self.states, l)).collect();
                let mut texture = Texture2DArray::new_gd();
                let err = texture.create_from_images(&images);
                if err != godot::global::Error::OK {
                    godot_error!("vat_crowd: the recent-state texture was refused: {err:?}");
                }
                self.sent += (needed * LAYER_BYTES) as u64;
                self.layer_count = needed;
                self.texture = Some(texture.clone());
                Some(texture)
            }
        }
    }

    /// The texture's RenderingServer RID, once made.
    pub fn texture_rid(&self) -> Option<Rid> {
        self.texture.as_ref().map(|t| t.get_rid())
    }

    /// Bytes handed to the engine so far.
    pub fn sent_bytes(&self) -> u64 {
        self.sent
    }
}
