## QuirkyCharacter dressed in the BaseMaterial3D features asset-pack characters have, for the
## checks that a baked model draws like its source material:
## - the legs and torso: an ORMMaterial3D with an albedo texture whose alpha cuts holes (alpha
##   scissor), a normal map (tangents generated as the importer does) and an ORM texture, UV1
##   scaled and offset;
## - the head: a ShaderMaterial of its own (a user's spatial shader): alpha-blended, with an
##   emission texture, rim and clearcoat, its vertex() moving the UVs;
## - the crest: sRGB vertex colours as albedo, double-sided.
## The textures are drawn here (small, with mipmaps), so the character needs no file.
class_name MaterialCharacter
extends RefCounted

const SIZE := 64


static func build() -> PackedScene:
	var root := QuirkyCharacter.build().instantiate()
	var body: MeshInstance3D = root.find_child("Body", true, false)
	body.mesh = _with_tangents(body.mesh)
	body.mesh.surface_set_material(0, _torso_material())
	body.mesh.surface_set_material(1, _head_material())
	var crest: MeshInstance3D = root.find_child("Crest", true, false)
	var crest_mat: StandardMaterial3D = crest.mesh.surface_get_material(0)
	crest_mat.vertex_color_is_srgb = true
	var scene := PackedScene.new()
	scene.pack(root)
	root.free()
	return scene


## `scene` with every mesh surface in a normal-mapped ORMMaterial3D, MikkTSpace tangents generated
## as the importer does for a normal-mapped material: normal maps on curved, smooth-shaded parts.
static func normal_mapped(scene: PackedScene) -> PackedScene:
	var root := scene.instantiate()
	for mi: MeshInstance3D in root.find_children("*", "MeshInstance3D", true, false):
		var mesh := mi.mesh as ArrayMesh
		if mesh == null:
			continue
		var out := _with_tangents(mesh)
		for s in out.get_surface_count():
			out.surface_set_material(s, _normal_mapped_material())
		mi.mesh = out
	var packed := PackedScene.new()
	packed.pack(root)
	root.free()
	return packed


## Builds the character and saves it to `path`; returns the error.
static func save(path: String) -> int:
	return ResourceSaver.save(build(), path)


## `mesh` with MikkTSpace tangents on every surface (what Godot's importer gives a mesh whose
## material has a normal map); other arrays kept.
static func _with_tangents(mesh: ArrayMesh) -> ArrayMesh:
	var out := ArrayMesh.new()
	for s in mesh.get_surface_count():
		var st := SurfaceTool.new()
		st.create_from(mesh, s)
		st.generate_tangents()
		st.commit(out)
	return out


static func _torso_material() -> ORMMaterial3D:
	var m := ORMMaterial3D.new()
	m.albedo_color = Color(1.0, 0.95, 0.9)
	m.albedo_texture = _texture(_albedo_image())
	m.transparency = BaseMaterial3D.TRANSPARENCY_ALPHA_SCISSOR
	m.alpha_scissor_threshold = 0.5
	m.normal_enabled = true
	m.normal_texture = _texture(_normal_image())
	m.normal_scale = 1.5
	m.orm_texture = _texture(_orm_image())
	m.metallic = 0.3
	m.roughness = 0.8
	m.uv1_scale = Vector3(2.0, 1.5, 1.0)
	m.uv1_offset = Vector3(0.1, 0.2, 0.0)
	return m


static func _normal_mapped_material() -> ORMMaterial3D:
	var m := ORMMaterial3D.new()
	m.albedo_color = Color(0.8, 0.75, 0.7)
	m.normal_enabled = true
	m.normal_texture = _texture(_normal_image())
	m.normal_scale = 1.5
	m.orm_texture = _texture(_orm_image())
	m.metallic = 0.3
	m.roughness = 0.7
	m.uv1_scale = Vector3(4.0, 4.0, 1.0)
	return m


static func _head_material() -> ShaderMaterial:
	var shader := Shader.new()
	shader.code = """shader_type spatial;
render_mode blend_mix, cull_back, depth_draw_opaque;
uniform vec4 base : source_color = vec4(0.85, 0.65, 0.5, 0.7);
uniform sampler2D glow : source_color, filter_linear_mipmap;
void vertex() {
	UV = UV * 1.5 + vec2(0.25);
}
void fragment() {
	ALBEDO = base.rgb;
	ALPHA = base.a;
	EMISSION = texture(glow, UV).rgb * vec3(0.3, 0.1, 0.0);
	ROUGHNESS = 0.4;
	RIM = 0.8;
	CLEARCOAT = 0.7;
}
"""
	var m := ShaderMaterial.new()
	m.shader = shader
	m.set_shader_parameter("glow", _texture(_orm_image()))
	return m


static func _texture(img: Image) -> ImageTexture:
	img.generate_mipmaps()
	return ImageTexture.create_from_image(img)


## Stripes of colour, with round holes (alpha 0) on a grid.
static func _albedo_image() -> Image:
	var img := Image.create(SIZE, SIZE, false, Image.FORMAT_RGBA8)
	for y in SIZE:
		for x in SIZE:
			var c := Color(0.9, 0.3, 0.2) if (x / 8) % 2 == 0 else Color(0.2, 0.6, 0.9)
			var dx := (x % 16) - 8
			var dy := (y % 16) - 8
			c.a = 0.0 if dx * dx + dy * dy < 12 else 1.0
			img.set_pixel(x, y, c)
	return img


## A tangent-space normal map of bumps (OpenGL convention, as Godot reads them).
static func _normal_image() -> Image:
	var img := Image.create(SIZE, SIZE, false, Image.FORMAT_RGB8)
	for y in SIZE:
		for x in SIZE:
			var u := TAU * x / 16.0
			var v := TAU * y / 16.0
			var n := Vector3(-0.6 * cos(u) * sin(v), -0.6 * sin(u) * cos(v), 1.0).normalized()
			img.set_pixel(x, y, Color(n.x * 0.5 + 0.5, n.y * 0.5 + 0.5, n.z * 0.5 + 0.5))
	return img


## Ambient occlusion, roughness and metallic in R, G, B, each varying its own way.
static func _orm_image() -> Image:
	var img := Image.create(SIZE, SIZE, false, Image.FORMAT_RGB8)
	for y in SIZE:
		for x in SIZE:
			img.set_pixel(x, y, Color(0.6 + 0.4 * float(x) / SIZE, 0.2 + 0.7 * float(y) / SIZE, 1.0 if (x / 16 + y / 16) % 2 == 0 else 0.0))
	return img
