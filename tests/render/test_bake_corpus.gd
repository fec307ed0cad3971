# The bake of every character we have, against Godot's own posing and its own skeletal render.
#
# Characters: every .glb that `cargo xtask test` copied from ../shared/assets into
# res://assets_local/ (a file dropped there is tested with no code change), the generated soldier
# and QuirkyCharacter (an armature scaled and rotated, seven UV sets, a vertex-coloured part, root
# motion and a zero-length clip), as built, with Godot's 8-weight skin format (every torso vertex
# on six bones), and after a glTF export and import, and
# MaterialCharacter (QuirkyCharacter in BaseMaterial3D's features: normal map, ORM, alpha scissor,
# sRGB vertex colours, and a ShaderMaterial part with blending, emission, rim and clearcoat), and
# CritterCharacter after glTF (no NORMAL, so flat normals; float RGB COLOR_0; a morph-only clip),
# and the soldier in a normal-mapped ORM material (normal maps on curved parts: baked tangents).
# Each is baked three times with the same clips (all of them, or for a
# character with more than MAX_CLIPS, MAX_CLIPS spread over the list plus every zero-length one):
# - by the command line: bake.gd in a separate headless Godot (`--script`), half precision;
# - by VertexAnimation.bake() in this running scene, float precision;
# both with storage Auto (bone textures where they fit), and
# - by VertexAnimation.bake() in the storage Auto did not pick (refused only for a character whose
#   blend shapes animate, which Bones must refuse).
# All are compared at FRAMES_PER_CLIP frames of every clip with Godot's posing of the same scene
# at get_frame_time (bake_mesh_from_current_skeleton_pose for skinned meshes, the blend-shape mix
# for morphed ones, the node transform for rigid ones): vertex error relative to the bounds'
# diagonal, normal error in degrees, and motion: wherever Godot moves a vertex between two of the
# compared frames, the baked frames must move it too. test_each_render_equivalence then draws each
# character (its first moving clip, half-way between two baked frames) with AnimatedMeshInstance
# against its skeletal render.
extends VatTest

const MAX_CLIPS := 12
const FRAMES_PER_CLIP := 5
const HALF_TOLERANCE := 2e-3
const FLOAT_TOLERANCE := 1e-4
const NORMAL_DEGREES := 3.0
## Godot moving a vertex by more than this share of the diagonal between two compared frames
## counts as motion the bake must show (at least half of it).
const MOTION_SHARE := 1e-2
const QUIRKY := "res://generated/quirky.tscn"
const QUIRKY_GLTF := "res://generated/quirky_gltf.tscn"
const QUIRKY_EIGHT := "user://quirky_eight.tscn"
## Written at test time (its textures are drawn by the test), outside the repository.
const MATERIALS := "user://material_character.scn"
const CRITTER_GLTF := "user://critter_gltf.scn"
const SOLDIER_NORMAL_MAPPED := "user://soldier_normal_mapped.scn"
const CLI_OUT := "user://corpus_cli"
## How much less a character may cover half-way between two baked frames than its skeletal
## render (see _check_render).
const HALFWAY_COVERAGE := 0.05


func cases_corpus() -> Array:
	var out := []
	for f in DirAccess.get_files_at("res://assets_local"):
		if f.get_extension().to_lower() in ["glb", "gltf"]:
			out.append(f)
	out.sort()
	out.append_array(["soldier", "quirky", "quirky_eight", "quirky_gltf", "materials", "critter_gltf", "soldier_normal_mapped"])
	return out


func test_corpus_has_real_characters() -> void:
	var real := cases_corpus().filter(func(c: String) -> bool: return c.get_extension() in ["glb", "gltf"])
	if real.is_empty():
		var why := "no character in res://assets_local (../shared/assets or $VAT_CROWD_ASSETS): only generated ones were tested"
		if in_ci():
			fail(why)
		else:
			skip(why)


func _scene_path(case: String) -> String:
	match case:
		"soldier":
			return "res://generated/soldier.tscn"
		"quirky":
			var err := QuirkyCharacter.save(QUIRKY)
			check_eq(err, OK, "the generated character saves")
			return QUIRKY
		"quirky_eight":
			var err := QuirkyCharacter.save(QUIRKY_EIGHT, true)
			check_eq(err, OK, "the generated character with 8 weights per vertex saves")
			return QUIRKY_EIGHT
		"quirky_gltf":
			var err := QuirkyCharacter.save_through_gltf(QUIRKY_GLTF, "user://quirky.glb")
			check_eq(err, OK, "the generated character goes through glTF")
			return QUIRKY_GLTF
		"materials":
			var err := MaterialCharacter.save(MATERIALS)
			check_eq(err, OK, "the generated material character saves")
			return MATERIALS
		"soldier_normal_mapped":
			var dressed := MaterialCharacter.normal_mapped(load("res://generated/soldier.tscn"))
			check_eq(ResourceSaver.save(dressed, SOLDIER_NORMAL_MAPPED), OK, "the normal-mapped soldier saves")
			return SOLDIER_NORMAL_MAPPED
		"critter_gltf":
			var err := CritterCharacter.save_through_gltf(CRITTER_GLTF, "user://critter.glb")
			check_eq(err, OK, "the generated critter goes through glTF")
			return CRITTER_GLTF
		_:
			return "res://assets_local/".path_join(case)


## All clips but RESET; above MAX_CLIPS, MAX_CLIPS spread over the list plus every zero-length one.
func _pick_clips(player: AnimationPlayer) -> PackedStringArray:
	var all := PackedStringArray()
	for n in player.get_animation_list():
		if n != "RESET" and not n.ends_with("/RESET"):
			all.append(n)
	if all.size() <= MAX_CLIPS:
		return all
	var picked := PackedStringArray()
	for n in all:
		if player.get_animation(n).length <= 0.0011:
			picked.append(n)
	var step := float(all.size() - 1) / float(MAX_CLIPS - 1)
	for i in MAX_CLIPS:
		var n := all[int(round(i * step))]
		if not picked.has(n):
			picked.append(n)
	return picked


## Bakes `scene_path` with bake.gd in a separate headless Godot and loads the result.
func _cli_bake(case: String, scene_path: String, clips: PackedStringArray) -> VertexAnimation:
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(CLI_OUT))
	var out := CLI_OUT.path_join(case.get_basename() + ".res")
	var args := ["--headless", "--path", ProjectSettings.globalize_path("res://"),
		"--script", "res://addons/vat_crowd/bake.gd", "--",
		"--source", scene_path, "--out", out, "--clips", ",".join(clips), "--precision", "half",
		"--no-lod"]
	var log := []
	var code := OS.execute(OS.get_executable_path(), args, log, true)
	var text: String = "\n".join(log)
	if not check_eq(code, 0, "bake.gd exits 0 for %s (output: %s)" % [case, text.right(1500)]):
		return null
	check(not text.contains("is_inside_tree"), "bake.gd posed %s inside the running tree" % case)
	check(not text.contains("ERROR"), "bake.gd printed no error for %s: %s" % [case, text.right(1500)])
	return ResourceLoader.load(out, "", ResourceLoader.CACHE_MODE_IGNORE) as VertexAnimation


func _meshes_of(root: Node) -> Array:
	var out := []
	for n in root.find_children("*", "MeshInstance3D", true, false):
		if n.is_visible_in_tree() and n.mesh != null and n.mesh.get_surface_count() > 0:
			out.append(n)
	return out


## `prefix` and the storage `va` was baked in.
func _storage_key(prefix: String, va: VertexAnimation) -> String:
	return prefix + ("/bones" if va.baked_storage == VertexAnimation.STORAGE_BONES else "/vertices")


## Godot's own posing of every baked vertex, in the character root's space.
func _godot_pose(character: Node3D) -> Dictionary:
	var points := PackedVector3Array()
	var normals := PackedVector3Array()
	var tangents := PackedVector3Array()
	var inv := character.global_transform.affine_inverse()
	for mi: MeshInstance3D in _meshes_of(character):
		var mesh: Mesh = mi.mesh
		var skinned: bool = mi.skin != null or (mesh is ArrayMesh and mesh.surface_get_format(0) & Mesh.ARRAY_FORMAT_BONES)
		if skinned:
			mesh = mi.bake_mesh_from_current_skeleton_pose()
		elif mi.get_blend_shape_count() > 0:
			mesh = mi.bake_mesh_from_current_blend_shape_mix()
		var xf := inv * mi.global_transform
		var nb := xf.basis.inverse().transposed()
		for s in mesh.get_surface_count():
			var arrays := mesh.surface_get_arrays(s)
			for v in arrays[Mesh.ARRAY_VERTEX]:
				points.append(xf * v)
			var ns = arrays[Mesh.ARRAY_NORMAL]
			if ns == null or ns.size() != arrays[Mesh.ARRAY_VERTEX].size():
				for v in arrays[Mesh.ARRAY_VERTEX]:
					normals.append(Vector3.ZERO)
			else:
				for n in ns:
					normals.append((nb * n).normalized())
			# Godot turns a tangent with the model basis (not its inverse transpose).
			var ts = arrays[Mesh.ARRAY_TANGENT]
			var count: int = arrays[Mesh.ARRAY_VERTEX].size()
			for k in count:
				if ts == null or ts.size() != count * 4:
					tangents.append(Vector3.ZERO)
				else:
					tangents.append((xf.basis * Vector3(ts[k * 4], ts[k * 4 + 1], ts[k * 4 + 2])).normalized())
	return {"points": points, "normals": normals, "tangents": tangents}


func test_each_corpus(case: String) -> void:
	var path := _scene_path(case)
	var scene := load(path) as PackedScene
	if not check(scene != null, "%s loads as a scene" % path):
		return
	var character := scene.instantiate() as Node3D
	root.add_child(character)
	var players := character.find_children("*", "AnimationPlayer", true, false)
	if not check(players.size() > 0, "%s has an AnimationPlayer" % case):
		return
	var player: AnimationPlayer = players[0]
	var clips := _pick_clips(player)

	# Vertex by vertex against Godot's posing: the source's own vertices, so no LOD chain (the
	# chain's columns are checked against this path by tests/unit/test_lod_bake.gd, and
	# test_each_render_equivalence draws the LOD0 mesh).
	var game := VertexAnimation.new()
	game.source_scene = scene
	game.clips = clips
	game.precision = 1
	game.lod_enabled = false
	if not check_eq(game.bake(), OK, "%s: VertexAnimation.bake() in a running scene" % case):
		return
	var cli := _cli_bake(case, path, clips)
	if not check(cli != null and cli.is_baked(), "%s: the command-line bake loads and is baked" % case):
		return
	check_eq(cli.get_clip_names(), game.get_clip_names(), "%s: both bakes have the same clips" % case)
	check_eq(cli.baked_storage, game.baked_storage, "%s: both bakes pick the same storage" % case)
	if case == "quirky_eight":
		check_eq(game.baked_storage, VertexAnimation.STORAGE_BONES, "%s: Auto picks bone storage" % case)
		check_eq(game.get("bone_influences"), 8, "%s: bone storage keeps eight influences per vertex" % case)
	var bakes := {_storage_key("game/float", game): [game, FLOAT_TOLERANCE], _storage_key("cli/half", cli): [cli, HALF_TOLERANCE]}
	# The storage Auto did not pick, forced: refused only for animated blend shapes.
	var other := VertexAnimation.new()
	other.source_scene = scene
	other.clips = clips
	other.precision = 1
	other.lod_enabled = false
	other.storage = VertexAnimation.STORAGE_VERTICES if game.baked_storage == VertexAnimation.STORAGE_BONES else VertexAnimation.STORAGE_BONES
	var other_err := other.bake()
	if other.storage == VertexAnimation.STORAGE_BONES and _refused_bones(game):
		check_eq(other_err, FAILED, "%s: storage Bones is refused for animated blend shapes" % case)
	elif check_eq(other_err, OK, "%s: bakes in the storage Auto did not pick" % case):
		bakes[_storage_key("game/float", other)] = [other, FLOAT_TOLERANCE]
	# Tangents are baked exactly where a source material uses a normal map.
	var normal_mapped := case in ["materials", "soldier_normal_mapped"]
	for key in bakes:
		var va: VertexAnimation = bakes[key][0]
		check_eq(not va.decode_frame_tangents(0, 0).is_empty(), normal_mapped, "%s %s: tangents baked only for a normal map" % [case, key])
	var diag: float = game.get_bounds().size.length()
	var worst := {}
	for key in bakes:
		worst[key] = {"pos": 0.0, "deg": 0.0, "tdeg": 0.0, "where": "", "nwhere": "", "twhere": "", "frozen": 0}
	var compared := 0
	for c in game.get_clip_count():
		var clip_name: String = game.get_clip_names()[c]
		var n: int = game.get_clip_frame_count(c)
		check_eq(cli.get_clip_frame_count(c), n, "%s %s: both bakes have the same frames" % [case, clip_name])
		var picks := []
		for k in mini(FRAMES_PER_CLIP, n):
			var f := 0 if n == 1 else int(round(float(k) * (n - 1) / (mini(FRAMES_PER_CLIP, n) - 1)))
			if not picks.has(f):
				picks.append(f)
		var prev_truth := PackedVector3Array()
		var prev_ours := {}
		for f: int in picks:
			for skel in character.find_children("*", "Skeleton3D", true, false):
				skel.reset_bone_poses()
			player.play(clip_name)
			player.seek(game.get_frame_time(c, f), true)
			player.pause()
			await frames(2)
			var truth := _godot_pose(character)
			var pts: PackedVector3Array = truth["points"]
			compared += 1
			for key in bakes:
				var va: VertexAnimation = bakes[key][0]
				var ours := va.decode_frame(c, f)
				var our_normals := va.decode_frame_normals(c, f)
				var our_tangents := va.decode_frame_tangents(c, f)
				if not check_eq(ours.size(), pts.size(), "%s %s: vertex count" % [case, key]):
					return
				var w: Dictionary = worst[key]
				for i in ours.size():
					var e := ours[i].distance_to(pts[i])
					if e > w["pos"]:
						w["pos"] = e
						w["where"] = "%s frame %d vertex %d" % [clip_name, f, i]
					var tn: Vector3 = truth["normals"][i]
					if tn.length() > 0.5:
						var deg := rad_to_deg(our_normals[i].angle_to(tn))
						if deg > w["deg"]:
							w["deg"] = deg
							w["nwhere"] = "%s frame %d vertex %d" % [clip_name, f, i]
					var tt: Vector3 = truth["tangents"][i]
					if not our_tangents.is_empty() and tt.length() > 0.5:
						var tdeg := rad_to_deg(our_tangents[i].angle_to(tt))
						if tdeg > w["tdeg"]:
							w["tdeg"] = tdeg
							w["twhere"] = "%s frame %d vertex %d" % [clip_name, f, i]
				if not prev_truth.is_empty():
					var before: PackedVector3Array = prev_ours[key]
					for i in ours.size():
						var moved := pts[i].distance_to(prev_truth[i])
						if moved > MOTION_SHARE * diag and ours[i].distance_to(before[i]) < 0.5 * moved:
							w["frozen"] += 1
				prev_ours[key] = ours
			prev_truth = pts
	for key in bakes:
		var w: Dictionary = worst[key]
		var tol: float = bakes[key][1]
		print("    %s %s: %d frames, max vertex error %s of the diagonal (%s), max normal error %.2f deg (%s), %d frozen vertex moves" % [
			case, key, compared, w["pos"] / diag, w["where"], w["deg"], w["nwhere"], w["frozen"]])
		check(w["pos"] <= tol * diag, "%s %s: max vertex error %s of the diagonal <= %s (%s)" % [case, key, w["pos"] / diag, tol, w["where"]])
		check(w["deg"] <= NORMAL_DEGREES, "%s %s: max normal error %.2f deg <= %.1f (%s)" % [case, key, w["deg"], NORMAL_DEGREES, w["nwhere"]])
		if normal_mapped:
			print("    %s %s: max tangent error %.2f deg (%s)" % [case, key, w["tdeg"], w["twhere"]])
			check(w["tdeg"] <= NORMAL_DEGREES, "%s %s: max tangent error %.2f deg <= %.1f (%s)" % [case, key, w["tdeg"], NORMAL_DEGREES, w["twhere"]])
		check_eq(w["frozen"], 0, "%s %s: vertices Godot moves that the bake leaves in place" % [case, key])
	character.free()


## Each character drawn by AnimatedMeshInstance against its own skeletal render (run again in the
## Mobile and Compatibility renderers by `cargo xtask test`).
func cases_render_equivalence() -> Array:
	return cases_corpus()


func test_each_render_equivalence(case: String) -> void:
	var path := _scene_path(case)
	var scene := load(path) as PackedScene
	if not check(scene != null, "%s loads as a scene" % path):
		return
	var probe := scene.instantiate()
	var players := probe.find_children("*", "AnimationPlayer", true, false)
	var clips := _pick_clips(players[0]) if players.size() > 0 else PackedStringArray()
	probe.free()
	# What users get (LOD on and storage Auto, the defaults) and the source's own vertices (LOD
	# off), each in the storage Auto picks and in the other one.
	var bakes := {}
	for storage in [VertexAnimation.STORAGE_AUTO, -1]:
		for lod in [true, false]:
			var va := VertexAnimation.new()
			va.source_scene = scene
			va.clips = clips
			va.precision = 1
			va.lod_enabled = lod
			if storage == -1:
				# The storage Auto did not pick.
				var picked: int = bakes[""].baked_storage
				va.storage = VertexAnimation.STORAGE_VERTICES if picked == VertexAnimation.STORAGE_BONES else VertexAnimation.STORAGE_BONES
			var label := ("" if lod else "without LOD") if storage != -1 else ("%s%s" % ["vertices" if va.storage == VertexAnimation.STORAGE_VERTICES else "bones", "" if lod else " without LOD"])
			var err := va.bake()
			if storage == -1 and va.storage == VertexAnimation.STORAGE_BONES and _refused_bones(bakes[""]):
				check_eq(err, FAILED, "%s: storage Bones is refused for animated blend shapes" % case)
				continue
			if not check_eq(err, OK, "%s bakes (%s)" % [case, label if label != "" else "defaults"]):
				return
			_check_bone_lod2(case, label, va)
			bakes[label] = va
	await _check_render(case, scene, bakes)


## A bone bake's LOD2 (columns bound to triangles, skinned from their blended influences) was put
## through the hole check again as bone storage draws it, and passed.
func _check_bone_lod2(case: String, label: String, va: VertexAnimation) -> void:
	if va.baked_storage != VertexAnimation.STORAGE_BONES:
		return
	for l: Dictionary in va.get_bake_stats()["lods"]:
		if l["built_level"] != 2:
			continue
		if not check(l.has("bone_holes_pct"), "%s (%s): LOD2 in bone storage has its own hole check" % [case, label]):
			return
		print("    %s (%s): LOD2 holes %.2f%% / loss %.2f%% (vertex storage's check: %.2f%% / %.2f%%)" % [case, label, l["bone_holes_pct"], l["bone_loss_pct"], l["holes_pct"], l["loss_pct"]])
		check(l["bone_holes_pct"] <= 1.0 and l["bone_loss_pct"] <= 6.0, "%s (%s): LOD2 skinned from bones passes the hole check" % [case, label])


## Whether Auto kept `va` in vertex storage because it animates blend shapes (which a bone texture
## cannot play: storage Bones is refused for it).
func _refused_bones(va: VertexAnimation) -> bool:
	return "animates blend shapes" in str(va.get_bake_stats().get("storage_reason", ""))


## The first clip whose frames move, drawn by AnimatedMeshInstance (from `va`, baked with the
## default LOD, and from `flat`, without) and by the character's own skeletal render, at a baked
## frame and half-way between two: each close to it, and covering as many pixels.
##
## On a baked frame the coverage must agree within 1%. Half-way, the shader interpolates each
## vertex linearly between the two frames while the skeleton turns its bones, so a part that
## turns fast (a sword in a chop, baked at 30 fps) is drawn along the chord, a little short: up
## to HALFWAY_COVERAGE there (the KayKit knight's chop: 3.5% fewer pixels). A clip that needs
## more takes a higher rate through `clip_fps`. On the baked frame AnimatedActorMeshInstance draws
## it too, brought there by a battle frame's calls (`capture_actor_moved_in`).
func _check_render(case: String, scene: PackedScene, bakes: Dictionary) -> void:
	var va: VertexAnimation = bakes[""]
	var clip := -1
	for c in va.get_clip_count():
		if va.get_clip_frame_count(c) > 2 and va.decode_frame(c, 0) != va.decode_frame(c, va.get_clip_frame_count(c) / 2):
			clip = c
			break
	if not check(clip >= 0, "%s has a clip that moves" % case):
		return
	var clip_name: String = va.get_clip_names()[clip]
	var on_frame := va.get_frame_time(clip, va.get_clip_frame_count(clip) / 2)
	# Framed on the clip's own bounds, so the character fills the picture.
	var box := va.get_clip_bounds(clip)
	var center := box.get_center()
	stage(center + Vector3(0.5, 0.25, 0.9).normalized() * box.size.length() * 0.9, center)
	var background := await capture()
	for t: float in [on_frame, on_frame + 0.5 / va.get_clip_frame_rate(clip)]:
		var coverage := 0.01 if t == on_frame else HALFWAY_COVERAGE
		var shots: Array = await capture_skeletal_and_vat(scene, va, clip, t)
		var name := "corpus_%s_%s_%s_%.3f" % [RenderingServer.get_current_rendering_method(), case.get_basename(), clip_name.validate_filename(), t]
		save_png(shots[0], name + "_skeletal")
		save_png(shots[1], name + "_vat")
		var storage := "bones" if va.baked_storage == VertexAnimation.STORAGE_BONES else "vertices"
		check_render_close("%s render (%s)" % [name, storage], shots[0], shots[1])
		check_foreground_close("%s coverage (%s)" % [name, storage], background, shots[0], shots[1], coverage)
		if t == on_frame:
			# The actor node's battle-frame calls (placements straight into the texture, a listed
			# clip switch) on the same bake, against the same skeletal render.
			var moved := await capture_actor_moved_in(va, clip, t)
			save_png(moved, name + "_actor_moved_in")
			check_render_close("%s render, actor moved in" % name, shots[0], moved)
			check_foreground_close("%s coverage, actor moved in" % name, background, shots[0], moved, coverage)
			if RenderingServer.get_current_rendering_method() != "gl_compatibility":
				# The CPU frame (gpu_driven off), which Compatibility runs by default, here too.
				var cpu := await capture_actor_moved_in(va, clip, t, false)
				save_png(cpu, name + "_actor_moved_in_cpu_frame")
				check_render_close("%s render, actor moved in, CPU frame" % name, shots[0], cpu)
				check_foreground_close("%s coverage, actor moved in, CPU frame" % name, background, shots[0], cpu, coverage)
		for label: String in bakes:
			if label == "":
				continue
			var other := await capture_vat(bakes[label], clip, t)
			save_png(other, name + "_vat_" + label.replace(" ", "_"))
			check_render_close("%s render, %s" % [name, label], shots[0], other)
			check_foreground_close("%s coverage, %s" % [name, label], background, shots[0], other, coverage)
