//! The compute pipeline every GPU-driven crowd shares: `shaders/vat_crowd_frame.glsl` (built into
//! the library) after the constants of `vat_core::crowd::glsl_defines`, compiled once on the
//! main rendering device, with the sampler its texture reads use. Held while a crowd uses it,
//! freed with the last one (so nothing is left for Godot's leak report at exit). Touched only on
//! the render thread.

use std::sync::Mutex;

use godot::classes::rendering_device::{SamplerFilter, ShaderStage};
use godot::classes::{RdSamplerState, RdShaderSource, RenderingDevice};
use godot::prelude::*;

/// The compute shader's source after its `#version` and generated constants.
const SOURCE: &str = include_str!("../../../../../shaders/vat_crowd_frame.glsl");

/// The compiled pipeline and what it needs.
#[derive(Clone, Copy)]
pub struct Pipeline {
    /// The compute shader.
    pub shader: Rid,
    /// Its pipeline.
    pub pipeline: Rid,
    /// Nearest-filter sampler for the data textures (read with texelFetch).
    pub sampler: Rid,
}

struct Shared {
    /// The pipeline, or why it could not be made.
    pipeline: Result<Pipeline, String>,
    users: usize,
}

static SHARED: Mutex<Option<Shared>> = Mutex::new(None);

/// The full GLSL source of the pass.
pub fn source() -> String {
    format!(
        "#version 450\n{}\n{SOURCE}",
        vat_core::crowd::glsl_defines()
    )
}

fn compile(rd: &mut Gd<RenderingDevice>) -> Result<Pipeline, String> {
    let mut src = RdShaderSource::new_gd();
    src.set_stage_source(ShaderStage::COMPUTE, &source());
    let spirv = rd
        .shader_compile_spirv_from_source(&src)
        .ok_or("the rendering device compiled nothing")?;
    let error = spirv.get_stage_compile_error(ShaderStage::COMPUTE);
    if !error.is_empty() {
        return Err(format!(
            "the crowd frame's compute shader did not compile: {error}"
        ));
    }
    let shader = rd.shader_create_from_spirv(&spirv);
    if !shader.is_valid() {
        return Err("the rendering device refused the crowd frame's compute shader".into());
    }
    let pipeline = rd.compute_pipeline_create(shader);
    let mut state = RdSamplerState::new_gd();
    state.set_min_filter(SamplerFilter::NEAREST);
    state.set_mag_filter(SamplerFilter::NEAREST);
    let sampler = rd.sampler_create(&state);
    Ok(Pipeline {
        shader,
        pipeline,
        sampler,
    })
}

/// Takes a share of the pipeline, compiling it on first use. `Err` says why there is none (the
/// share is taken either way: give it back with [`release`]).
pub fn acquire(rd: &mut Gd<RenderingDevice>) -> Result<Pipeline, String> {
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    let entry = shared.get_or_insert_with(|| Shared {
        pipeline: compile(rd),
        users: 0,
    });
    entry.users += 1;
    entry.pipeline.clone()
}

/// Gives back a share; the last one frees the pipeline.
pub fn release(rd: &mut Gd<RenderingDevice>) {
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    let Some(entry) = shared.as_mut() else {
        return;
    };
    entry.users = entry.users.saturating_sub(1);
    if entry.users == 0 {
        if let Ok(p) = &entry.pipeline {
            // The pipeline goes with its shader.
            rd.free_rid(p.sampler);
            rd.free_rid(p.shader);
        }
        *shared = None;
    }
}
