//! The shader library and the Rust packer must agree on every layout constant.

use vat_core::layout;

fn shader_define(name: &str) -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shaders/vat_crowd.gdshaderinc"
    );
    let text = std::fs::read_to_string(path).expect("shaders/vat_crowd.gdshaderinc exists");
    text.lines()
        .find_map(|l| {
            let mut parts = l.split_whitespace();
            (parts.next() == Some("#define") && parts.next() == Some(name))
                .then(|| parts.next().unwrap_or("").to_string())
        })
        .unwrap_or_else(|| panic!("#define {name} missing from the shader library"))
}

#[test]
fn shader_constants_match_the_packer() {
    assert_eq!(
        shader_define("VAT_DATA_TEXTURE_WIDTH"),
        layout::DATA_TEXTURE_WIDTH.to_string()
    );
    assert_eq!(
        shader_define("VAT_PLACEMENT_TEXELS"),
        layout::PLACEMENT_TEXELS.to_string()
    );
    assert_eq!(
        shader_define("VAT_PLACEMENT_TEXELS_FULL"),
        layout::PLACEMENT_TEXELS_FULL.to_string()
    );
    assert_eq!(
        shader_define("VAT_STATE_TEXELS"),
        layout::STATE_TEXELS.to_string()
    );
    assert_eq!(
        shader_define("VAT_CLIP_CODE_BASE"),
        layout::CLIP_CODE_BASE.to_string()
    );
    assert_eq!(
        shader_define("VAT_BLEND_BIAS").parse::<f32>().unwrap(),
        layout::BLEND_BIAS
    );
    assert_eq!(
        shader_define("VAT_LOOK_TEXELS"),
        "2",
        "LookTable packs two texels per look"
    );
    assert_eq!(
        shader_define("VAT_RECENT_SLOT_BIAS"),
        layout::RECENT_SLOT_BIAS.to_string()
    );
    assert_eq!(shader_define("VAT_YAW_BITS"), layout::YAW_BITS.to_string());
    assert_eq!(
        shader_define("VAT_YAW_STEPS"),
        layout::YAW_STEPS.to_string()
    );
}
