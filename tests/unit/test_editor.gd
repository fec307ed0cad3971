# What the crowd nodes show and keep in the editor: configuration warnings, the crowd clock kept
# out of saved scenes, internal VertexAnimation fields kept out of the inspector and F1, and the
# VertexAnimation inspector's groups (Source, Bake, Baked) in reading order.
extends VatTest

const SOLDIER := "res://generated/soldier.tscn"


func _has_warning(node: Node, part: String) -> bool:
	for w in node.get_configuration_warnings():
		if part in w:
			return true
	return false


## Saves `node` (with an owner chain) as .tscn text and returns the text.
func _tscn_text(node: Node, file: String) -> String:
	var scene := PackedScene.new()
	check_eq(scene.pack(node), OK, "pack %s" % node.get_class())
	var path := "user://%s.tscn" % file
	check_eq(ResourceSaver.save(scene, path), OK, "save %s" % path)
	var text := FileAccess.get_file_as_string(path)
	DirAccess.remove_absolute(ProjectSettings.globalize_path(path))
	# The packed state is what both .tscn and .scn store: check it too.
	var state := scene.get_state()
	for p in state.get_node_property_count(0):
		check(state.get_node_property_name(0, p) != &"time", "%s: time is not packed" % file)
	return text


func test_crowd_clock_is_not_saved() -> void:
	var m := AnimatedMeshInstance.new()
	m.time = 12.5
	m.paused = true
	var text := _tscn_text(m, "editor_clock_mesh")
	check("paused = true" in text, "a changed exported property is saved (the test can see one)")
	check(not ("time =" in text), "AnimatedMeshInstance.time is not in the .tscn:\n" + text)
	m.free()
	var a := AnimatedActorMeshInstance.new()
	a.time = 7.25
	a.paused = true
	text = _tscn_text(a, "editor_clock_actor")
	check("paused = true" in text, "a changed exported property is saved (actor)")
	check(not ("time =" in text), "AnimatedActorMeshInstance.time is not in the .tscn:\n" + text)
	a.free()


func test_crowd_clock_stays_in_the_inspector_but_not_storage() -> void:
	for node: Node in [AnimatedMeshInstance.new(), AnimatedActorMeshInstance.new()]:
		var found := false
		for p in node.get_property_list():
			if p.name == "time":
				found = true
				check(p.usage & PROPERTY_USAGE_EDITOR != 0, "%s.time is in the inspector" % node.get_class())
				check(p.usage & PROPERTY_USAGE_STORAGE == 0, "%s.time is not stored" % node.get_class())
		check(found, "%s has a time property" % node.get_class())
		node.free()


func test_crowd_clock_runs_outside_the_editor() -> void:
	# Engine.is_editor_hint() is false here: the clock must still move (the editor rule is
	# vat_core::clock::clock_runs, unit-tested in Rust).
	check(not Engine.is_editor_hint(), "tests run outside the editor")
	var m := AnimatedMeshInstance.new()
	m.animation = soldier_body()
	root.add_child(m)
	var t0: float = m.time
	await frames(3)
	check(m.time > t0, "the clock advances at run time")


func test_internal_fields_are_saved_but_hidden() -> void:
	var hidden := ["clip_table", "clip_bounds_table", "baked_precision", "clip_root_velocities", "source_path", "source_uid", "source_embedded", "variation_files", "variations_embedded", "variation_layers"]
	var seen := {}
	for p in soldier_body().get_property_list():
		if p.name in hidden:
			seen[p.name] = true
			check(p.usage & PROPERTY_USAGE_STORAGE != 0, "%s is stored" % p.name)
			check(p.usage & PROPERTY_USAGE_EDITOR == 0, "%s is not in the inspector" % p.name)
			check(p.usage & PROPERTY_USAGE_INTERNAL != 0, "%s is left out of the class reference" % p.name)
	check_eq(seen.size(), hidden.size(), "every internal field is registered")
	# Saved and loaded back: the fields still round-trip.
	var path := "user://editor_internal.res"
	check_eq(ResourceSaver.save(soldier_body(), path), OK, "save")
	var back: VertexAnimation = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
	for name in hidden:
		check_eq(back.get(name), soldier_body().get(name), "%s survives a save and load" % name)
	check(back.is_baked(), "the loaded resource is baked")
	DirAccess.remove_absolute(ProjectSettings.globalize_path(path))


## Property name -> [group, subgroup, usage] as the inspector reads the properties `object`'s own
## class registers (up to the next class's category), and "_groups": its groups, in order.
func _inspector_layout(object: Object) -> Dictionary:
	var out := {}
	var groups := []
	var group := ""
	var subgroup := ""
	var own := false
	for p in object.get_property_list():
		if p.usage & PROPERTY_USAGE_CATEGORY:
			if own:
				break
			own = p.name == object.get_class()
			continue
		if not own:
			continue
		if p.usage & PROPERTY_USAGE_GROUP:
			group = p.name
			subgroup = ""
			groups.append(group)
		elif p.usage & PROPERTY_USAGE_SUBGROUP:
			subgroup = p.name
		else:
			out[p.name] = [group, subgroup, p.usage]
	out["_groups"] = groups
	return out


func test_inspector_reads_top_down() -> void:
	var layout := _inspector_layout(soldier_body())
	check_eq(layout["_groups"], ["Source", "Baked"], "the groups, in order")
	for name in ["source_scene", "animation_player", "meshes", "clips", "fps", "clip_fps", "precision",
			"bake_normals", "texture_variations", "root_motion", "root_motion_bone"]:
		check_eq(layout.get(name, [""])[0], "Source", "%s is a Source setting" % name)
	for name in ["lod_distances", "lod_enabled", "lod1_ratio", "lod_head_bone", "lod2_triangles", "lod_voxel_size"]:
		check_eq(layout.get(name, ["", ""]).slice(0, 2), ["Source", "LOD"], "%s is in Source > LOD" % name)
	# The Bake button first and in no group: no group folds it away (with the plugin, its Bake panel
	# takes the top of the inspector instead; tests/editor/editor_check.gd checks that).
	check_eq(layout.get("bake_button", ["?"])[0], "", "the Bake button is in no group")
	check_eq(layout.keys()[0], "bake_button", "the Bake button is the first property")
	for name in ["mesh", "lod_meshes", "position_texture", "normal_texture", "clip_texture", "variations",
			"vertex_count", "frame_count", "bounds", "clip_names", "column_channel"]:
		var entry: Array = layout.get(name, ["", "", 0])
		check_eq(entry[0], "Baked", "%s is in Baked" % name)
		check(entry[2] & PROPERTY_USAGE_EDITOR != 0, "%s is shown" % name)
		check(entry[2] & PROPERTY_USAGE_READ_ONLY != 0, "%s is read-only" % name)
	for name in ["clip_table", "clip_bounds_table", "baked_precision", "clip_root_velocities",
			"encoding_offset", "encoding_scale"]:
		var entry: Array = layout.get(name, ["", "", 0])
		check(entry[2] & PROPERTY_USAGE_STORAGE != 0, "%s is stored" % name)
		check(entry[2] & PROPERTY_USAGE_EDITOR == 0, "%s is not in the inspector" % name)
	var baker := VertexAnimationBaker.new()
	check(_inspector_layout(baker).has("bake_button"), "the baker has its Bake button")
	baker.free()


func test_mesh_instance_warnings() -> void:
	var m := AnimatedMeshInstance.new()
	root.add_child(m)
	check(_has_warning(m, "No animation"), "no animation: warned")
	m.animation = VertexAnimation.new()
	check(_has_warning(m, "is not baked"), "unbaked animation: warned")
	m.animation = soldier_body()
	check_eq(m.get_configuration_warnings().size(), 0, "baked animation: no warning")


func test_actor_warnings() -> void:
	var a := AnimatedActorMeshInstance.new()
	root.add_child(a)
	check(_has_warning(a, "no models are set"), "no models: warned")
	a.models = [soldier_body(), VertexAnimation.new()] as Array[VertexAnimation]
	check(_has_warning(a, "models[1] (unsaved) is not baked"), "unbaked model: warned")
	var other := VertexAnimation.new()
	other.source_scene = load(SOLDIER)
	other.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	other.clips = PackedStringArray(["walk", "idle"])
	check_eq(other.bake(), OK, "two-clip bake")
	a.models = [soldier_body(), other] as Array[VertexAnimation]
	check(_has_warning(a, "models[1] (unsaved) has a different clip table than models[0]"), "clip tables differ: warned")
	a.models = [soldier_body(), soldier_body()] as Array[VertexAnimation]
	check_eq(a.get_configuration_warnings().size(), 0, "matching baked models: no warning")


func test_baker_warnings() -> void:
	var b := VertexAnimationBaker.new()
	root.add_child(b)
	check(_has_warning(b, "No targets"), "no targets: warned")
	check(_has_warning(b, "No character"), "no character child: warned")
	b.targets = [VertexAnimation.new()] as Array[VertexAnimation]
	check(not _has_warning(b, "No targets"), "a target: no targets warning")
	check(_has_warning(b, "No character"), "still no character")
	b.add_child(Node3D.new())
	check_eq(b.get_configuration_warnings().size(), 0, "targets and a character: no warning")
	var own := VertexAnimation.new()
	own.source_scene = load(SOLDIER)
	var lone := VertexAnimationBaker.new()
	root.add_child(lone)
	lone.targets = [own] as Array[VertexAnimation]
	check_eq(lone.get_configuration_warnings().size(), 0, "targets with their own source_scene need no character")


func test_preview_never_runs_in_a_game() -> void:
	# The editor preview is drawn only under Engine.is_editor_hint() (checked in the real editor
	# by the package tier's editor check); in a game the same settings draw nothing.
	check(not Engine.is_editor_hint(), "tests run outside the editor")
	var m := AnimatedMeshInstance.new()
	check_eq(m.preview_count, 1, "AnimatedMeshInstance.preview_count defaults to 1")
	m.animation = soldier_body()
	m.preview_count = 9
	m.preview_clip = "walk"
	root.add_child(m)
	var a := AnimatedActorMeshInstance.new()
	check_eq(a.preview_count, 1, "AnimatedActorMeshInstance.preview_count defaults to 1")
	a.models = [soldier_body()] as Array[VertexAnimation]
	a.preview_count = 9
	root.add_child(a)
	await frames(3)
	check_eq(m.get_instance_count(), 0, "no preview instance at run time")
	check_eq(a.get_actor_count(), 0, "no preview actor at run time")
	var text := _tscn_text(m, "editor_preview_settings")
	check("preview_count = 9" in text and "preview_clip = \"walk\"" in text, "the preview settings are saved:\n" + text)


func test_bake_warnings_say_what_is_missing_and_when_the_source_changed() -> void:
	var va := VertexAnimation.new()
	var w := va.get_bake_warnings()
	check(w.size() >= 1 and w[0].begins_with("No source scene"), "no source: %s" % [w])
	# A source with no skeleton and no animation cannot bake.
	var empty := PackedScene.new()
	var n := Node3D.new()
	empty.pack(n)
	n.free()
	va.source_scene = empty
	w = va.get_bake_warnings()
	check(w.size() == 2 and w[0].begins_with("The source cannot be baked") and w[1].begins_with("Not baked yet"),
		"a source that cannot bake, not baked: %s" % [w])
	# Baked from a file: no warning until the file changes.
	var path := "user://warned_soldier.tscn"
	var soldier: PackedScene = load("res://generated/soldier.tscn")
	check_eq(ResourceSaver.save(soldier, path), OK, "copy the soldier to a file of its own")
	var source: PackedScene = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
	va = VertexAnimation.new()
	va.source_scene = source
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	va.lod_enabled = false
	check_eq(va.get_bake_warnings().size(), 1, "before baking: one warning (not baked)")
	check_eq(va.bake(), OK, "bake")
	check_eq(va.get_bake_warnings(), PackedStringArray(), "a fresh bake: no warning")
	var saved := FileAccess.get_file_as_string(path)
	var f := FileAccess.open(path, FileAccess.WRITE)
	f.store_string(saved + "\n")
	f.close()
	w = va.get_bake_warnings()
	check(w.size() == 1 and w[0].begins_with("The bake is older than its source"), "the source file changed: %s" % [w])
	# The stamp is saved with the bake and survives a reload.
	var res_path := "user://warned_soldier.res"
	check_eq(va.save_to(res_path), OK, "save the bake")
	var reloaded: VertexAnimation = ResourceLoader.load(res_path, "", ResourceLoader.CACHE_MODE_IGNORE)
	w = reloaded.get_bake_warnings()
	check(w.size() == 1 and w[0].begins_with("The bake is older"), "after a reload too: %s" % [w])
	DirAccess.remove_absolute(ProjectSettings.globalize_path(path))
	DirAccess.remove_absolute(ProjectSettings.globalize_path(res_path))


## The shared properties of both crowd nodes, by inspector group, in order (one declaration in
## rust/vat_gdext/src/crowd/node_api.rs serves both nodes).
const CROWD_GROUPS := {
	"Playback": ["paused", "speed_scale", "interpolate", "time"],
	"Look": ["billboard", "full_transform"],
	"Culling and LOD": ["culling", "culling_camera", "lod_bias", "max_lod", "force_lod", "lod_interpolate", "lod_debug_colors"],
	"Shadows": ["cast_shadow", "shadow_lod"],
	"Preview": ["preview_count", "preview_clip"],
}


func test_both_crowd_nodes_group_their_properties_alike() -> void:
	var retained := AnimatedMeshInstance.new()
	var actors := AnimatedActorMeshInstance.new()
	var own := {retained: ["animation", "material_override"], actors: ["models", "material_overrides"]}
	for node: Node in [retained, actors]:
		var cls := node.get_class()
		var layout := _inspector_layout(node)
		check_eq(layout["_groups"], ["Models", "Playback", "Look", "Culling and LOD", "Shadows", "Preview"],
			"%s: the groups, in order" % cls)
		for name in own[node]:
			check_eq(layout.get(name, [""])[0], "Models", "%s.%s is in Models" % [cls, name])
		for group in CROWD_GROUPS:
			for name in CROWD_GROUPS[group]:
				check_eq(layout.get(name, [""])[0], group, "%s.%s is in %s" % [cls, name, group])
	check_eq(_inspector_layout(retained).get("auto_submit", [""])[0], "Playback", "auto_submit is a Playback setting")
	check(not _inspector_layout(actors).has("auto_submit"), "the actor node has no auto_submit (its docs say why)")
	# The same defaults and the same refusals on both.
	for name in ["paused", "speed_scale", "interpolate", "billboard", "full_transform", "culling", "lod_bias",
			"max_lod", "force_lod", "lod_interpolate", "lod_debug_colors", "cast_shadow", "shadow_lod",
			"preview_count", "preview_clip"]:
		check_eq(actors.get(name), retained.get(name), "%s: the same default on both nodes" % name)
	for node: Node in [retained, actors]:
		node.speed_scale = 2.5
		check_eq(node.speed_scale, 2.5, "%s takes a speed_scale" % node.get_class())
		node.speed_scale = INF
		check_eq(node.speed_scale, 2.5, "%s refuses an infinite speed_scale" % node.get_class())
		node.max_lod = -7
		check_eq(node.max_lod, -1, "%s refuses max_lod -7" % node.get_class())
	retained.free()
	actors.free()


func test_speed_scale_drives_both_clocks() -> void:
	var nodes := []
	for scale in [1.0, 3.0]:
		var retained := AnimatedMeshInstance.new()
		retained.animation = soldier_body()
		var actors := AnimatedActorMeshInstance.new()
		actors.models = [soldier_body()] as Array[VertexAnimation]
		for node: Node in [retained, actors]:
			node.speed_scale = scale
			root.add_child(node)
			nodes.append(node)
	await frames(1)
	var t0 := nodes.map(func(n): return n.time)
	await frames(4)
	var advanced := []
	for i in nodes.size():
		advanced.append(nodes[i].time - t0[i])
	# nodes: retained x1, actors x1, retained x3, actors x3; all saw the same process deltas.
	for i in 2:
		var cls: String = nodes[i].get_class()
		check(advanced[i] > 0.0, "%s's clock runs at speed_scale 1" % cls)
		check_near(advanced[i + 2], 3.0 * advanced[i], 1e-6 + 1e-6 * advanced[i],
			"%s's clock runs 3x as fast at speed_scale 3" % cls)


func test_preview_clip_shows_the_clip_it_plays() -> void:
	for node: Node in [AnimatedMeshInstance.new(), AnimatedActorMeshInstance.new()]:
		if node is AnimatedMeshInstance:
			node.animation = soldier_body()
		else:
			node.models = [soldier_body()] as Array[VertexAnimation]
		var first: String = soldier_body().clip_names[0]
		var info := _property(node, "preview_clip")
		check_eq(info.get("hint"), PROPERTY_HINT_PLACEHOLDER_TEXT, "%s: an empty preview_clip shows a placeholder" % node.get_class())
		check(String(info.get("hint_string", "")).begins_with(first), "%s: the placeholder names the first clip '%s': %s" % [node.get_class(), first, info])
		node.preview_clip = first
		info = _property(node, "preview_clip")
		check_eq(info.get("hint"), PROPERTY_HINT_ENUM_SUGGESTION, "%s: a set preview_clip offers the clips" % node.get_class())
		check(String(info.get("hint_string", "")).split(",").has(first), "%s: the suggestions list the clips" % node.get_class())
		node.free()


func _property(object: Object, name: String) -> Dictionary:
	for p in object.get_property_list():
		if p.name == name:
			return p
	return {}
