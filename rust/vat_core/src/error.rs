//! The one error type of `vat_core`.
//!
//! Every fallible function returns [`Result`]. Each variant carries enough context (which mesh,
//! clip, frame or index) for its `Display` text to be one sentence a user can act on; the Godot
//! binding prints that sentence verbatim.

use std::fmt;

/// Everything that can go wrong while planning, skinning, encoding or packing.
#[derive(Debug, Clone, PartialEq)]
pub enum VatError {
    /// The bake was given no mesh, or only meshes without vertices.
    NoMeshes,
    /// The bake was given no animation clip.
    NoClips,
    /// A clip was looked up by a name that no baked clip has.
    UnknownClip {
        /// The name that was asked for.
        name: String,
    },
    /// A clip's duration is negative or not finite.
    BadDuration {
        /// The clip's name.
        clip: String,
    },
    /// A clip's sampling rate is zero, negative or not finite.
    BadFps {
        /// The clip's name.
        clip: String,
        /// The rejected rate in frames per second.
        fps: f32,
    },
    /// The vertex animation texture would exceed the largest texture we allow.
    TooLarge {
        /// Vertices per frame.
        vertices: usize,
        /// Frames over all clips.
        frames: usize,
        /// Texels needed (`vertices * frames`).
        texels: u64,
        /// Texels that fit (`VAT_MAX_WIDTH * MAX_TEXTURE_SIZE`).
        max_texels: u64,
    },
    /// More clips than a clip code can address.
    TooManyClips {
        /// Clips given.
        count: usize,
        /// Clips allowed ([`crate::layout::MAX_CLIPS`]).
        max: u32,
    },
    /// A per-vertex or per-frame array of a mesh has the wrong length.
    MismatchedArray {
        /// The mesh's name.
        mesh: String,
        /// Which array, e.g. `"normals"` or `"bone weights"`.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length it has.
        got: usize,
    },
    /// A vertex is weighted to a bone index the skin does not bind.
    BoneOutOfRange {
        /// The mesh's name.
        mesh: String,
        /// The vertex index within the mesh.
        vertex: usize,
        /// The offending bone index.
        bone: u32,
        /// How many binds the skin has.
        bind_count: usize,
    },
    /// A sampled frame does not hold one entry per mesh.
    FrameMismatch {
        /// The frame index over all clips.
        frame: usize,
        /// Meshes being baked.
        expected_meshes: usize,
        /// Entries the frame holds.
        got: usize,
    },
    /// An input or result is NaN or infinite.
    NonFinite {
        /// What it was and where, e.g. "transform of mesh 'Body' at clip 'walk' frame 3".
        what: String,
    },
    /// More distinct (tint, variation) looks than an instance's look byte can address.
    TooManyLooks {
        /// Looks allowed ([`crate::layout::MAX_LOOKS`]).
        max: u32,
    },
    /// An index (clip, actor, ...) lies outside its valid range `0..len`.
    IndexOutOfRange {
        /// What kind of index, e.g. `"clip index"`.
        what: &'static str,
        /// The offending index.
        index: i64,
        /// The number of valid indices.
        len: usize,
    },
    /// A crowd value (speed, time, blend time) outside what the crowd can store or play.
    BadValue {
        /// What it is and where, e.g. `"speed of entry 3"`.
        what: String,
        /// The rejected value.
        value: f64,
        /// The values allowed, e.g. `"finite, within +-65504 (stored as f16)"`.
        allowed: &'static str,
    },
    /// A crowd would outgrow what one crowd node can address or the renderer can hold.
    TooManyItems {
        /// What is counted, e.g. `"instances"`.
        what: &'static str,
        /// How many the call would make.
        wanted: u64,
        /// How many fit.
        max: u64,
        /// Which limit sets `max`, e.g. `"24-bit actor index"`.
        limit: String,
    },
    /// Parallel arrays handed to a bulk call differ in length (not tied to a mesh).
    BadLength {
        /// Which array, e.g. `"yaws"`.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length it has.
        got: usize,
    },
    /// A setting or input that is wrong as a whole (not one entry of an array), with why.
    InvalidValue {
        /// What it is, e.g. `"LOD switch distances"`.
        what: &'static str,
        /// What is wrong and what would be right.
        detail: String,
    },
}

/// `Result` with [`VatError`].
pub type Result<T> = std::result::Result<T, VatError>;

impl fmt::Display for VatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use VatError::*;
        match self {
            NoMeshes => write!(f, "no mesh with vertices was found to bake"),
            NoClips => write!(f, "no animation clip was given; at least one is needed to bake"),
            UnknownClip { name } => write!(f, "there is no baked clip named '{name}'"),
            BadDuration { clip } => write!(
                f,
                "clip '{clip}' has a negative or non-finite length; it cannot be baked"
            ),
            BadFps { clip, fps } => write!(
                f,
                "clip '{clip}' has sampling rate {fps} fps; it must be a positive finite number"
            ),
            TooLarge { vertices, frames, texels, max_texels } => write!(
                f,
                "{vertices} vertices x {frames} frames need {texels} texels, more than the \
                 {max_texels} one texture holds; lower the fps, bake fewer clips or simplify the mesh"
            ),
            TooManyClips { count, max } => {
                write!(f, "{count} clips were given but at most {max} can be baked into one model")
            }
            MismatchedArray { mesh, what, expected, got } => write!(
                f,
                "mesh '{mesh}': {what} has {got} entries but {expected} were expected"
            ),
            BoneOutOfRange { mesh, vertex, bone, bind_count } => write!(
                f,
                "mesh '{mesh}': vertex {vertex} uses bone {bone} but its skin has only \
                 {bind_count} binds"
            ),
            FrameMismatch { frame, expected_meshes, got } => write!(
                f,
                "frame {frame} holds transforms for {got} meshes but {expected_meshes} are baked"
            ),
            NonFinite { what } => write!(f, "{what} is not finite (NaN or infinity)"),
            TooManyLooks { max } => write!(
                f,
                "more than {max} distinct (tint, variation) looks were used for one model in one update"
            ),
            IndexOutOfRange { what, index, len } => {
                write!(f, "{what} {index} is out of range; valid values are 0 to {len} (exclusive)")
            }
            BadValue { what, value, allowed } => {
                write!(f, "{what} {value} is not allowed; it must be {allowed}")
            }
            TooManyItems { what, wanted, max, limit } => write!(
                f,
                "{wanted} {what} are more than the {max} one crowd can hold ({limit})"
            ),
            BadLength { what, expected, got } => {
                write!(f, "{what} has {got} entries but {expected} were expected")
            }
            InvalidValue { what, detail } => write!(f, "{what}: {detail}"),
        }
    }
}

impl std::error::Error for VatError {}

/// `Ok` when an array has the length it must have, else [`VatError::BadLength`] naming it.
pub(crate) fn check_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(VatError::BadLength {
            what,
            expected,
            got,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_what_and_where() {
        let e = VatError::BadDuration {
            clip: "walk".into(),
        };
        assert_eq!(
            e.to_string(),
            "clip 'walk' has a negative or non-finite length; it cannot be baked"
        );
        let e = VatError::BoneOutOfRange {
            mesh: "Body".into(),
            vertex: 7,
            bone: 40,
            bind_count: 32,
        };
        assert_eq!(
            e.to_string(),
            "mesh 'Body': vertex 7 uses bone 40 but its skin has only 32 binds"
        );
        let e = VatError::IndexOutOfRange {
            what: "clip index",
            index: -1,
            len: 3,
        };
        assert_eq!(
            e.to_string(),
            "clip index -1 is out of range; valid values are 0 to 3 (exclusive)"
        );
    }

    #[test]
    fn is_std_error() {
        let e: Box<dyn std::error::Error> = Box::new(VatError::NoClips);
        assert!(e.to_string().contains("no animation clip"));
    }
}
