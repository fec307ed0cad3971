//! Godot's own shader for a source `BaseMaterial3D`, with the VAT stage spliced in
//! (`vat_core::shader_splice`): the default material of a baked model draws like its source in
//! every feature Godot's materials have, in the Godot version that runs the game.
//!
//! Godot generates that code inside the renderer and hands it out only through
//! `Material.inspect_native_shader_code()`, which calls `_inspect_shader(shader_rid)` on the nodes
//! of the group `_native_shader_source_visualizer` (the editor's viewer) a moment later (a
//! deferred call), where `RenderingServer.shader_get_code()` reads it. So a request is one
//! [`VatShaderSource`] node: added to the tree, the only member of that group while it asks (the
//! editor's viewer leaves the group for that call, so no window opens), answered within the same
//! frame's message flush. Until the answer comes (and wherever none comes: the dummy renderer of
//! `--headless` keeps no code) a material draws with the shipped shader, then takes Godot's code
//! in place. The code is kept per source material for the rest of the run.

use std::cell::RefCell;
use std::collections::HashMap;

use godot::classes::base_material_3d::TextureParam;
use godot::classes::ShaderMaterial;
use godot::classes::{BaseMaterial3D, Engine, INode, Node, RenderingServer, SceneTree, Shader};
use godot::prelude::*;
use vat_core::shader_splice::splice_vat_stage;

/// The group `Material.inspect_native_shader_code()` calls.
const GROUP: &str = "_native_shader_source_visualizer";
/// The shader library, included by every spliced shader.
const INCLUDE: &str = "res://addons/vat_crowd/shaders/vat_crowd.gdshaderinc";
/// Frames a request waits for its answer before the shipped shader is kept.
const ANSWER_FRAMES: u32 = 8;

/// Godot's code for one source material, spliced.
struct Code {
    /// The spliced shader code.
    code: String,
    /// The uniforms Godot's code declares (their values are read from the source material).
    params: Vec<String>,
}

#[derive(Default)]
struct Native {
    /// Per source material: its code, or `None` where the renderer gave none.
    codes: HashMap<InstanceId, Option<std::rc::Rc<Code>>>,
    /// Source materials asked for and not answered yet.
    asked: Vec<InstanceId>,
    /// Materials drawn with the shipped shader until their source's code comes: (material, source).
    waiting: Vec<(InstanceId, InstanceId)>,
    /// One shader per spliced code, shared by every material drawn with it (held weakly: the
    /// materials own it).
    shaders: HashMap<String, InstanceId>,
}

thread_local! {
    static NATIVE: RefCell<Native> = RefCell::new(Native::default());
}

/// What is known of a source material's code.
pub enum Lookup {
    /// A material with Godot's code and the source's values; bind the animation to it.
    Ready(Gd<ShaderMaterial>),
    /// No code comes (the renderer keeps none, or the code could not take the VAT stage).
    Unavailable,
    /// Asked; call [`wait_for`] with the stand-in material.
    Pending,
}

/// The material for `source` if its code is known; otherwise asks for it (once per source).
pub fn lookup(source: &Gd<BaseMaterial3D>) -> Lookup {
    let known = NATIVE.with(|n| n.borrow().codes.get(&source.instance_id()).cloned());
    match known {
        Some(Some(code)) => Lookup::Ready(material_for(source, &code)),
        Some(None) => Lookup::Unavailable,
        None => {
            if ask(source) {
                Lookup::Pending
            } else {
                Lookup::Unavailable
            }
        }
    }
}

/// `material` (drawn with the shipped shader for now) takes `source`'s code when it comes.
pub fn wait_for(material: &Gd<ShaderMaterial>, source: &Gd<BaseMaterial3D>) {
    NATIVE.with(|n| {
        let mut n = n.borrow_mut();
        n.waiting
            .retain(|(m, _)| Gd::<ShaderMaterial>::try_from_instance_id(*m).is_ok());
        n.waiting
            .push((material.instance_id(), source.instance_id()));
    });
}

/// Starts a request for `source`'s code; false where none can be made (no scene tree).
fn ask(source: &Gd<BaseMaterial3D>) -> bool {
    let id = source.instance_id();
    if NATIVE.with(|n| n.borrow().asked.contains(&id)) {
        return true;
    }
    let Some(mut root) = Engine::singleton()
        .get_main_loop()
        .and_then(|l| l.try_cast::<SceneTree>().ok())
        .and_then(|t| t.get_root())
    else {
        return false;
    };
    let mut node = VatShaderSource::new_alloc();
    node.bind_mut().source = Some(source.clone());
    node.set_name("VatShaderSource");
    root.call_deferred("add_child", &[node.to_variant()]);
    NATIVE.with(|n| n.borrow_mut().asked.push(id));
    true
}

/// Records the answer for `source` (None: no code) and gives it to the materials waiting for it.
fn answer(source: &Gd<BaseMaterial3D>, shader: Option<Rid>) {
    let id = source.instance_id();
    let code = shader
        .and_then(|rid| read_code(source, rid))
        .map(std::rc::Rc::new);
    let waiting = NATIVE.with(|n| {
        let mut n = n.borrow_mut();
        n.asked.retain(|a| *a != id);
        n.codes.insert(id, code.clone());
        let (mine, rest): (Vec<_>, Vec<_>) = n.waiting.drain(..).partition(|(_, s)| *s == id);
        n.waiting = rest;
        mine
    });
    let Some(code) = code else {
        return;
    };
    for (m, _) in waiting {
        if let Ok(mut material) = Gd::<ShaderMaterial>::try_from_instance_id(m) {
            apply(&mut material, source, &code);
        }
    }
}

/// Godot's code for the shader `rid` of `source`, spliced, with its uniform names.
fn read_code(source: &Gd<BaseMaterial3D>, rid: Rid) -> Option<Code> {
    let rs = RenderingServer::singleton();
    let raw = rs.shader_get_code(rid).to_string();
    match splice_vat_stage(&raw, INCLUDE) {
        Ok(spliced) => {
            let params = rs
                .get_shader_parameter_list(rid)
                .iter_shared()
                .filter_map(|d| d.get("name").map(|v| v.to_string()))
                .collect();
            Some(Code {
                code: spliced.code,
                params,
            })
        }
        Err(vat_core::shader_splice::SpliceError::Empty) => None,
        Err(e) => {
            godot_warn!(
                "vat_crowd: material '{}' draws with vat_crowd's own shader: Godot's code for it \
                 cannot take the VAT stage ({e})",
                source.get_path()
            );
            None
        }
    }
}

/// A new material drawn with `code`'s shader and `source`'s values.
fn material_for(source: &Gd<BaseMaterial3D>, code: &Code) -> Gd<ShaderMaterial> {
    let mut m = ShaderMaterial::new_gd();
    apply(&mut m, source, code);
    m
}

/// Gives `material` `code`'s shader and every uniform's value from `source`, as Godot's own
/// conversion to a ShaderMaterial does (textures as the source's Texture2D objects).
fn apply(material: &mut Gd<ShaderMaterial>, source: &Gd<BaseMaterial3D>, code: &Code) {
    material.set_shader(&shader_for(&code.code));
    let rs = RenderingServer::singleton();
    let rid = source.get_rid();
    let textures: Vec<Gd<godot::classes::Texture2D>> = (0..TextureParam::MAX.ord())
        .filter_map(|p| source.get_texture(TextureParam::from_ord(p)))
        .collect();
    for name in &code.params {
        let value = rs.material_get_param(rid, name.as_str());
        if value.is_nil() {
            continue;
        }
        if let Ok(tex_rid) = value.try_to::<Rid>() {
            if let Some(t) = textures.iter().find(|t| t.get_rid() == tex_rid) {
                material.set_shader_parameter(name.as_str(), &t.to_variant());
            }
            continue;
        }
        material.set_shader_parameter(name.as_str(), &value);
    }
    // Read by `material::bind_animation`: only textured surfaces take texture variations.
    let textured = source.get_texture(TextureParam::ALBEDO).is_some();
    material.set_shader_parameter("use_albedo_texture", &textured.to_variant());
    material.set_meta(NATIVE_META, &true.to_variant());
}

/// A source `ShaderMaterial`'s own spatial shader with the VAT stage, its parameters copied; None
/// (after one warning) where its code cannot take the stage.
pub fn from_shader_material(source: &Gd<ShaderMaterial>) -> Option<Gd<ShaderMaterial>> {
    let shader = source.get_shader()?;
    match splice_vat_stage(&shader.get_code().to_string(), INCLUDE) {
        Ok(spliced) => {
            let mut m = ShaderMaterial::new_gd();
            m.set_shader(&shader_for(&spliced.code));
            for u in shader.get_shader_uniform_list().iter_shared() {
                let name = u
                    .try_to::<VarDictionary>()
                    .ok()
                    .and_then(|d| d.get("name"))
                    .map(|v| v.to_string());
                if let Some(name) = name {
                    let value = source.get_shader_parameter(name.as_str());
                    if !value.is_nil() {
                        m.set_shader_parameter(name.as_str(), &value);
                    }
                }
            }
            m.set_meta(NATIVE_META, &true.to_variant());
            Some(m)
        }
        Err(e) => {
            godot_warn!(
                "vat_crowd: material '{}' draws with vat_crowd's own shader: its shader cannot \
                 take the VAT stage ({e})",
                source.get_path()
            );
            None
        }
    }
}

/// Meta key marking a material drawn with Godot's own code.
pub const NATIVE_META: &str = "vat_crowd_native";

/// The shared shader for `code`.
fn shader_for(code: &str) -> Gd<Shader> {
    let cached = NATIVE.with(|n| n.borrow().shaders.get(code).copied());
    if let Some(s) = cached.and_then(|id| Gd::<Shader>::try_from_instance_id(id).ok()) {
        return s;
    }
    let mut s = Shader::new_gd();
    s.set_code(code);
    NATIVE.with(|n| {
        let mut n = n.borrow_mut();
        n.shaders
            .retain(|_, id| Gd::<Shader>::try_from_instance_id(*id).is_ok());
        n.shaders.insert(code.to_string(), s.instance_id());
    });
    s
}

/// One request for a material's generated shader (see the module docs); frees itself once
/// answered, or after [`ANSWER_FRAMES`] frames without an answer.
#[derive(GodotClass)]
#[class(tool, internal, base = Node)]
pub struct VatShaderSource {
    source: Option<Gd<BaseMaterial3D>>,
    frames: u32,
    base: Base<Node>,
}

#[godot_api]
impl INode for VatShaderSource {
    fn init(base: Base<Node>) -> Self {
        Self {
            source: None,
            frames: 0,
            base,
        }
    }

    fn ready(&mut self) {
        let Some(mut source) = self.source.clone() else {
            return;
        };
        let tree = self.base().get_tree();
        // Only this node hears this call: the editor's viewer would open a window.
        let others: Vec<Gd<Node>> = tree
            .get_nodes_in_group(GROUP)
            .iter_shared()
            .filter(|n| *n != self.to_gd().upcast::<Node>())
            .collect();
        for mut o in others.iter().cloned() {
            o.remove_from_group(GROUP);
        }
        self.base_mut().add_to_group(GROUP);
        source.inspect_native_shader_code();
        self.base_mut().remove_from_group(GROUP);
        for mut o in others {
            o.add_to_group(GROUP);
        }
        self.base_mut().set_process(true);
    }

    fn process(&mut self, _delta: f64) {
        self.frames += 1;
        if self.frames > ANSWER_FRAMES {
            if let Some(source) = self.source.take() {
                answer(&source, None);
            }
            self.base_mut().queue_free();
        }
    }
}

#[godot_api]
impl VatShaderSource {
    /// Called by `Material.inspect_native_shader_code()` with the material's shader; ignored on
    /// a node that is not a crowd's request.
    #[func]
    fn _inspect_shader(&mut self, shader: Rid) {
        // Only a request frees itself; a node a script made has nothing to answer.
        if let Some(source) = self.source.take() {
            answer(&source, Some(shader));
            self.base_mut().queue_free();
        }
    }
}
