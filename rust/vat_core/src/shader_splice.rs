//! Godot's own material shader with the VAT vertex stage spliced in.
//!
//! A baked model's default material must draw like its source `BaseMaterial3D` in every feature
//! (normal maps, ORM, alpha scissor and hash, transparency, vertex colours, emission, rim,
//! clearcoat, UV transforms, ...). Rather than chase each feature by hand, the crowd nodes take
//! the shader code Godot itself generates for the source material (the code the editor's
//! "Convert to ShaderMaterial" shows, read from the running engine) and splice the VAT stage into
//! it with [`splice_vat_stage`]:
//! * after the `render_mode` line: the shader library's `#include`, the variation array and the
//!   per-instance varyings;
//! * first in `vertex()`: the animated, placed vertex, normal and tangent frame;
//! * every albedo sample `texture(texture_albedo, UV)`: the instance's texture variation instead,
//!   when the model has variations;
//! * last in `fragment()`: the instance's tint on `ALBEDO`.
//!
//! Everything else of Godot's code is kept byte for byte, so a feature Godot adds to its materials
//! comes with the engine that draws it. What the splice relies on (the `shader_type` line,
//! `vertex()` and `fragment()` written as `void NAME() {`, the albedo sampler's name) is checked:
//! code that lacks it is refused with a [`SpliceError`], and the crowd keeps its own shader.

use std::fmt;

/// Uniform holding a model's texture variations (a `Texture2DArray`).
pub const VARIATIONS_UNIFORM: &str = "vat_variations";
/// Uniform turning variations on for a material.
pub const USE_VARIATIONS_UNIFORM: &str = "use_variations";
/// The sampler Godot's generated code reads the albedo texture from.
pub const ALBEDO_SAMPLER: &str = "texture_albedo";

/// Why Godot's code could not take the VAT stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpliceError {
    /// The code is empty (the dummy renderer keeps no shader code).
    Empty,
    /// No `shader_type spatial;` line.
    NotSpatial,
    /// A function's braces do not balance.
    Unbalanced(&'static str),
}

impl fmt::Display for SpliceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "the renderer returned no shader code"),
            Self::NotSpatial => write!(f, "the code has no 'shader_type spatial;' line"),
            Self::Unbalanced(func) => write!(f, "the braces of {func}() do not balance"),
        }
    }
}

impl std::error::Error for SpliceError {}

/// Godot's material code with the VAT stage in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spliced {
    /// The shader code.
    pub code: String,
    /// Whether some albedo sample now reads the variation array (false where the material has
    /// no albedo texture, or samples it in a way the splice does not rewrite, e.g. triplanar).
    pub variations: bool,
}

/// Splices the VAT stage into `code`, Godot's generated shader for a `BaseMaterial3D`;
/// `include` is the `res://` path of the shader library (`vat_crowd.gdshaderinc`).
pub fn splice_vat_stage(code: &str, include: &str) -> Result<Spliced, SpliceError> {
    if code.trim().is_empty() {
        return Err(SpliceError::Empty);
    }
    let type_at = code
        .find("shader_type spatial;")
        .ok_or(SpliceError::NotSpatial)?;
    let header_at = match code[type_at..].find("render_mode") {
        Some(r) => statement_end(code, type_at + r),
        None => statement_end(code, type_at),
    };
    let header = format!(
        "\n\n// vat_crowd: the VAT stage (see vat_crowd.gdshaderinc).\n\
         #include \"{include}\"\n\
         uniform sampler2DArray {VARIATIONS_UNIFORM} : source_color, filter_linear_mipmap, repeat_enable;\n\
         uniform bool {USE_VARIATIONS_UNIFORM} = false;\n\
         varying vec4 vat_v_tint;\n\
         varying flat float vat_v_variation;\n"
    );
    let mut out = String::with_capacity(code.len() + 1024);
    out.push_str(&code[..header_at]);
    out.push_str(&header);
    let rest = &code[header_at..];

    const VERTEX_STAGE: &str =
        "\n\t// vat_crowd: the animated, placed vertex first; Godot's own vertex code follows.\n\
         \tVatInstance vat_inst = VAT_INSTANCE;\n\
         \tvat_vertex_frame(vat_inst, VAT_COLUMN, VERTEX, NORMAL, TANGENT, BINORMAL);\n\
         \tvat_v_tint = vat_inst.tint;\n\
         \tvat_v_variation = vat_inst.variation;\n";
    const FRAGMENT_START: &str =
        "\n\t// vat_crowd: the tangent frame of the animated surface, for normal maps.\n\
         \tvat_fragment_frame(VERTEX, UV, NORMAL, TANGENT, BINORMAL);\n";
    const FRAGMENT_END: &str =
        "\t// vat_crowd: the instance's tint.\n\tALBEDO *= vat_v_tint.rgb;\n";
    let (rest, vertex_found) = insert_at_body_start(rest, "vertex", VERTEX_STAGE)?;
    let (rest, fragment_found) = insert_at_body_start(&rest, "fragment", FRAGMENT_START)?;
    let rest = if fragment_found {
        insert_at_body_end(&rest, "fragment", FRAGMENT_END)?
    } else {
        rest
    };
    let (rest, variations) = rewrite_albedo_samples(&rest);
    out.push_str(&rest);
    if !vertex_found {
        out.push_str(&format!("\nvoid vertex() {{{VERTEX_STAGE}}}\n"));
    }
    if !fragment_found {
        out.push_str(&format!(
            "\nvoid fragment() {{{FRAGMENT_START}{FRAGMENT_END}}}\n"
        ));
    }
    Ok(Spliced {
        code: out,
        variations,
    })
}

/// Byte index just past the `;` that ends the statement starting at `from`.
fn statement_end(code: &str, from: usize) -> usize {
    code[from..].find(';').map_or(code.len(), |i| from + i + 1)
}

/// Where `void NAME() {` opens its body: the index just past the `{`.
fn body_start(code: &str, name: &str) -> Option<usize> {
    let signature = format!("void {name}()");
    let at = code.find(&signature)?;
    let brace = code[at..].find('{')?;
    Some(at + brace + 1)
}

/// The index of the `}` that closes the body opening at `start` (just past its `{`).
fn body_end(code: &str, start: usize, name: &'static str) -> Result<usize, SpliceError> {
    let mut depth = 1usize;
    let bytes = code.as_bytes();
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i += code[i..].find('\n').unwrap_or(code.len() - i);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += code[i..].find("*/").map_or(code.len() - i, |e| e + 2);
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Err(SpliceError::Unbalanced(name))
}

fn insert_at_body_start(
    code: &str,
    name: &'static str,
    text: &str,
) -> Result<(String, bool), SpliceError> {
    let Some(start) = body_start(code, name) else {
        return Ok((code.to_string(), false));
    };
    body_end(code, start, name)?;
    Ok((format!("{}{text}{}", &code[..start], &code[start..]), true))
}

fn insert_at_body_end(code: &str, name: &'static str, text: &str) -> Result<String, SpliceError> {
    let start = body_start(code, name).ok_or(SpliceError::Unbalanced(name))?;
    let end = body_end(code, start, name)?;
    Ok(format!("{}{text}{}", &code[..end], &code[end..]))
}

/// Rewrites every `texture(texture_albedo, UV)` into a pick between the variation array and the
/// albedo texture; returns the code and whether any sample was rewritten.
fn rewrite_albedo_samples(code: &str) -> (String, bool) {
    let pattern = format!("texture({ALBEDO_SAMPLER},");
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    let mut any = false;
    while let Some(at) = rest.find(&pattern) {
        let args_start = at + pattern.len();
        // The UV argument runs to the parenthesis that closes the call.
        let mut depth = 1usize;
        let mut end = None;
        for (i, c) in rest[args_start..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(args_start + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            break;
        };
        let uv = rest[args_start..end].trim();
        out.push_str(&rest[..at]);
        out.push_str(&format!(
            "({USE_VARIATIONS_UNIFORM} ? texture({VARIATIONS_UNIFORM}, vec3({uv}, vat_v_variation)) : texture({ALBEDO_SAMPLER}, {uv}))"
        ));
        rest = &rest[end + 1..];
        any = true;
    }
    out.push_str(rest);
    (out, any)
}

#[cfg(test)]
mod tests;
