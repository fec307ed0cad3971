use super::*;

const INCLUDE: &str = "res://addons/vat_crowd/shaders/vat_crowd.gdshaderinc";

/// The shape of Godot's generated material code: a header, uniforms, vertex() and fragment()
/// with nested braces and comments.
const MATERIAL: &str =
    "// NOTE: generated.\n\nshader_type spatial;\nrender_mode blend_mix, cull_back;\n\n\
uniform vec4 albedo : source_color;\nuniform sampler2D texture_albedo : source_color;\n\n\
void vertex() {\n\tUV = UV * 2.0;\n}\n\n\
void fragment() {\n\tvec2 base_uv = UV;\n\t// a comment with a } brace\n\
\tvec4 albedo_tex = texture(texture_albedo, base_uv);\n\
\tif (albedo_tex.a < 0.5) {\n\t\tALPHA = 0.0;\n\t}\n\
\tvec4 detail = texture(texture_albedo, vec2(base_uv.x, fract(base_uv.y)));\n\
\tALBEDO = albedo.rgb * albedo_tex.rgb * detail.rgb;\n}\n";

fn spliced(code: &str) -> Spliced {
    splice_vat_stage(code, INCLUDE).expect("splices")
}

#[test]
fn the_include_comes_after_the_render_mode_line() {
    let s = spliced(MATERIAL);
    let render_mode = s.code.find("render_mode blend_mix, cull_back;").unwrap();
    let include = s.code.find(&format!("#include \"{INCLUDE}\"")).unwrap();
    let uniforms = s.code.find("uniform vec4 albedo").unwrap();
    assert!(render_mode < include && include < uniforms, "{}", s.code);
}

#[test]
fn the_vertex_stage_runs_before_godots_vertex_code() {
    let s = spliced(MATERIAL);
    let body = s.code.find("void vertex() {").unwrap();
    let stage = s.code.find("vat_vertex_frame(vat_inst").unwrap();
    let uv = s.code.find("UV = UV * 2.0;").unwrap();
    assert!(body < stage && stage < uv, "{}", s.code);
}

#[test]
fn the_tint_is_the_last_statement_of_fragment() {
    let s = spliced(MATERIAL);
    let albedo = s.code.find("ALBEDO = albedo.rgb").unwrap();
    let tint = s.code.find("ALBEDO *= vat_v_tint.rgb;").unwrap();
    let after = &s.code[tint..];
    assert!(albedo < tint, "{}", s.code);
    // Only the function's closing brace follows the tint.
    assert_eq!(after.trim_end().chars().last(), Some('}'));
    assert_eq!(after.matches('}').count(), 1, "{after}");
    let frame = s.code.find("vat_fragment_frame(").unwrap();
    assert!(s.code.find("void fragment() {").unwrap() < frame && frame < albedo);
}

#[test]
fn every_albedo_sample_can_read_the_variations() {
    let s = spliced(MATERIAL);
    assert!(s.variations);
    assert!(s.code.contains(
        "(use_variations ? texture(vat_variations, vec3(base_uv, vat_v_variation)) : texture(texture_albedo, base_uv))"
    ));
    assert!(s.code.contains(
        "texture(vat_variations, vec3(vec2(base_uv.x, fract(base_uv.y)), vat_v_variation))"
    ));
    // Every original sample was rewritten (each rewritten one keeps one plain sample inside).
    assert_eq!(s.code.matches("texture(texture_albedo,").count(), 2);
}

#[test]
fn godots_code_is_kept_whole() {
    let s = spliced(MATERIAL);
    for line in MATERIAL.lines() {
        if line.contains("texture(texture_albedo") {
            continue;
        }
        assert!(s.code.contains(line), "lost: {line}");
    }
}

#[test]
fn missing_functions_are_added() {
    let s = spliced("shader_type spatial;\nuniform float x;\n");
    assert!(!s.variations);
    assert!(s.code.contains("void vertex() {"));
    assert!(s.code.contains("vat_vertex_frame(vat_inst"));
    assert!(s.code.contains("void fragment() {"));
    assert!(s.code.contains("ALBEDO *= vat_v_tint.rgb;"));
    // Without a render_mode line the header follows shader_type.
    assert!(s.code.find("shader_type spatial;").unwrap() < s.code.find("#include").unwrap());
}

#[test]
fn code_that_cannot_take_the_stage_is_refused() {
    assert_eq!(splice_vat_stage("  \n", INCLUDE), Err(SpliceError::Empty));
    assert_eq!(
        splice_vat_stage("shader_type canvas_item;\nvoid fragment() {}\n", INCLUDE),
        Err(SpliceError::NotSpatial)
    );
    assert_eq!(
        splice_vat_stage(
            "shader_type spatial;\nvoid fragment() {\n\tif (true) {\n}\n",
            INCLUDE
        ),
        Err(SpliceError::Unbalanced("fragment"))
    );
}
