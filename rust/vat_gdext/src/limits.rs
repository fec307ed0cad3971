//! The renderer's limits on textures, which both a bake (its VAT and variation array) and a
//! crowd (its data textures) must stay within.

use godot::classes::rendering_device::Limit;
use godot::classes::RenderingServer;
use godot::obj::Singleton;

/// The largest 2D texture the renderer takes, in texels per side: the rendering device's limit
/// (Forward+, Mobile), else (Compatibility, headless) the size every desktop GPU takes, which is
/// also the most we create (`vat_core::layout::MAX_TEXTURE_SIZE`).
pub fn renderer_max_texture_size() -> u32 {
    let fallback = vat_core::layout::MAX_TEXTURE_SIZE;
    RenderingServer::singleton()
        .get_rendering_device()
        .map_or(fallback, |rd| {
            let limit = rd.limit_get(Limit::MAX_TEXTURE_SIZE_2D);
            u32::try_from(limit).unwrap_or(u32::MAX).min(fallback)
        })
}

/// The most layers a texture array may have on this renderer: the rendering device's limit
/// (Forward+, Mobile), else (Compatibility, headless) 2048, what desktop GPUs take (OpenGL ES and
/// Vulkan guarantee only 256).
pub fn renderer_max_texture_layers() -> u32 {
    const FALLBACK: u32 = 2048;
    RenderingServer::singleton()
        .get_rendering_device()
        .map_or(FALLBACK, |rd| {
            u32::try_from(rd.limit_get(Limit::MAX_TEXTURE_ARRAY_LAYERS)).unwrap_or(FALLBACK)
        })
}
