## Bake benchmark (issue 3, "Speed"): bakes the generated soldier, then the largest character of the shared corpus
## (the .glb in res://assets_local/ with the most vertices, measured; skipped with a note when there is none), all
## clips at 30 fps, in one Godot run with
##   vat_crowd               VertexAnimation.bake() (poses from Godot, skinning + encoding in Rust),
##   gdscript_meshdatatool   the seed proposal's approach ported to GDScript: MeshDataTool reads, CPU skinning,
##                           one Image.set_pixel per vertex per frame,
##   gdscript_bake_mesh      a GDScript loop over MeshInstance3D.bake_mesh_from_current_skeleton_pose(),
## and writes the medians as JSON, with vat_crowd's split per vertex-frame (sample, skin, encode, build in ns) and
## its own work (skin + encode + build) as a ratio to Godot's pose sampling. A benchmark, never a timed test.
##
## Run under the real renderer (skins need the rendering server; never --headless):
##   godot --path tests --rendering-driver vulkan -s res://bench/bench_bake.gd -- [--quick] --out /abs/bake.json
extends SceneTree

const Util := preload("res://bench/bench_util.gd")
const LodShare := preload("res://bench/bench_bake_lod.gd")
const DEFAULT_SCENE := "res://generated/soldier.tscn"  ## override with --scene res://...
const CORPUS_DIR := "res://assets_local"  ## the shared assets, copied there by cargo xtask bench/test
const FPS := 30.0

## Repetitions per baker (the MeshDataTool port stops repeating once a run exceeds SLOW_RUN_MS).
const REPS_FULL := {"vat_crowd": 7, "gdscript_bake_mesh": 3, "gdscript_meshdatatool": 3}
const REPS_QUICK := {"vat_crowd": 3, "gdscript_bake_mesh": 1, "gdscript_meshdatatool": 1}
## Bakers that differ by more than this (relative to the bounds' diagonal; half precision is ~3e-4) get a warning.
const DISAGREE_REL_ERROR := 5e-3
## A MeshDataTool run slower than this is not repeated.
const SLOW_RUN_MS := 15000.0
## The issue's goals: vat_crowd's own work at most this many times Godot's pose sampling...
const GOAL_OWN_VS_SAMPLE := 2.0
## ...and the whole bake at least this many times faster than the MeshDataTool port.
const GOAL_VS_MESHDATATOOL := 30.0


## What the GDScript bakers need to know about one MeshInstance3D of the character.
class MeshJob:
	var path: NodePath  ## relative to the character root
	var skinned := false
	var bind_bones := PackedInt32Array()  ## skeleton bone of each skin bind
	var bind_poses: Array[Transform3D] = []
	var vertex_count := 0
	var rest := PackedVector3Array()  ## all surfaces' vertices, in surface order (rigid meshes)
	var tools: Array[MeshDataTool] = []  ## one per surface, for the MeshDataTool port


var _opts: Dictionary
var _scene_path := DEFAULT_SCENE
var _packed: PackedScene
var _clips := PackedStringArray()
var _times: Array[PackedFloat32Array] = []  ## per clip, the sample times
var _vertex_count := 0
var _frame_count := 0
## Rows compared between the bakers: [clip index, frame index, global row].
var _check_frames: Array = []
var _check_results := {}  ## baker name -> Array of PackedVector3Array (one per check frame)


func _initialize() -> void:
	_run.call_deferred()


func _run() -> void:
	_opts = Util.parse_args()
	if not _opts.scene.is_empty():
		_scene_path = _opts.scene
	DisplayServer.window_set_vsync_mode(DisplayServer.VSYNC_DISABLED)
	print("bench_bake: %s, renderer %s, %s" % [
		Engine.get_version_info().string, RenderingServer.get_current_rendering_method(),
		RenderingServer.get_video_adapter_name()])
	if DisplayServer.get_name() == "headless":
		printerr("bench_bake: needs the real renderer (skins need the rendering server); do not use --headless")
		quit(2)
		return
	var reps: Dictionary = REPS_QUICK if _opts.quick else REPS_FULL
	if not ClassDB.class_exists("VertexAnimation"):
		printerr("bench_bake: class VertexAnimation is not registered (extension not built?); baking baselines only")

	var main := await _bench_character(_scene_path, reps)
	if main.is_empty():
		quit(1)
		return
	var characters: Array = [main]
	var corpus := _find_corpus_character()
	if corpus.path.is_empty():
		print("bench_bake: note: %s" % corpus.note)
	elif corpus.path == _scene_path:
		print("bench_bake: note: the corpus character is the --scene character; baked once")
	else:
		var extra := await _bench_character(corpus.path, reps)
		if extra.is_empty():
			corpus.note = "baking %s failed; see the errors above" % corpus.path
			push_warning("bench_bake: " + corpus.note)
		else:
			characters.append(extra)

	print("bench_bake: the LOD chain's share, every character (default bake / LOD off):")
	var lod_share: Array = LodShare.run(1 if _opts.quick else 3)

	var report: Dictionary = main.duplicate()
	report["characters"] = characters
	report["corpus"] = corpus
	report["lod_share"] = lod_share
	report["goals"] = {
		"own_work_vs_sample_at_most": GOAL_OWN_VS_SAMPLE,
		"meshdatatool_vs_vat_crowd_at_least": GOAL_VS_MESHDATATOOL,
	}
	report["notes"] = [
		"ms = median wall time of one full bake (all clips) over the repetitions; gdscript_meshdatatool runs "
		+ "once when a run exceeds %d ms." % int(SLOW_RUN_MS),
		"vat_crowd bakes positions and normals into its textures; the GDScript baselines bake positions only.",
		"gdscript_meshdatatool creates one MeshDataTool per surface once per bake (not per frame), then per frame "
		+ "and vertex calls get_vertex/get_vertex_bones/get_vertex_weights and Image.set_pixel (RGBAF).",
		"gdscript_bake_mesh awaits one process frame per sampled frame (the skin must reach the rendering server) "
		+ "and writes positions through PackedVector3Array.to_byte_array into an RGBF image.",
		"split_ns_per_vertex_frame = the split's medians (get_bake_stats) over vertices x frames; own_vs_sample = "
		+ "(skin + encode + build) / sample, where sample_ms also covers instancing and reading the scene. "
		+ "Skinning and encoding are fused: skin_ms is pass 1 (positions skinned for the bounds, every error "
		+ "found), encode_ms pass 2 (skinned again, encoded straight into the textures' Godot arrays).",
		"lod_share: per character (the soldier and every .glb/.gltf in %s), the median wall time of a whole bake "
		% CORPUS_DIR + "(all clips, 30 fps) with the defaults and with lod_enabled off, alternating, and their ratio.",
		"characters[0] is the top-level character; characters[1], when present, the corpus character (the .glb "
		+ "with the most vertices in %s, measured by instancing each)." % CORPUS_DIR,
	]
	_print_summary(characters, corpus)
	var err := Util.write_json(_opts.out, report)
	quit(0 if err == OK else 1)


## Bakes one character with every baker and returns its report ({} when vat_crowd's bake failed).
func _bench_character(scene_path: String, reps: Dictionary) -> Dictionary:
	_scene_path = scene_path
	_clips = PackedStringArray()
	_times.clear()
	_vertex_count = 0
	_frame_count = 0
	_check_frames.clear()
	_check_results.clear()
	_packed = load(_scene_path) as PackedScene
	if _packed == null:
		printerr("bench_bake: cannot load %s (generate the soldier first: cargo xtask build)" % _scene_path)
		return {}
	print("bench_bake: baking %s" % _scene_path)
	var results: Array = []
	var split := {}
	var vat_reps := 0
	if ClassDB.class_exists("VertexAnimation"):
		var vat := _bench_vat(reps.vat_crowd)
		if vat.is_empty():
			return {}
		results.append({"baker": "vat_crowd", "ms": vat.ms, "repetitions": vat.reps})
		split = vat.split
		vat_reps = vat.reps
	else:
		_plan_clips_from_player()
	_pick_check_frames()

	var bm := await _bench_bake_mesh(reps.gdscript_bake_mesh)
	var mdt := _bench_meshdatatool(reps.gdscript_meshdatatool)
	results.append({"baker": "gdscript_meshdatatool", "ms": mdt.ms, "repetitions": mdt.reps})
	results.append({"baker": "gdscript_bake_mesh", "ms": bm.ms, "repetitions": bm.reps})

	var checks := _compare()
	_print_table(results, split, vat_reps)
	var report := {
		"character": _scene_path,
		"vertices": _vertex_count,
		"frames": _frame_count,
		"clips": Array(_clips),
		"fps": FPS,
		"results": results,
		"split": split,
		"checks": checks,
		"godot": Engine.get_version_info().string,
		"adapter": RenderingServer.get_video_adapter_name(),
	}
	report.merge(_per_vertex_frame(split, results))
	return report


## The split per vertex-frame in ns, vat_crowd's own work over sampling, and the ratio of each GDScript baker
## to vat_crowd's whole bake.
func _per_vertex_frame(split: Dictionary, results: Array) -> Dictionary:
	var vertex_frames := float(_vertex_count) * float(_frame_count)
	if split.is_empty() or vertex_frames <= 0.0:
		return {}
	var ns := {}
	for stage in ["sample", "skin", "encode", "build", "total"]:
		ns[stage] = split.get(stage + "_ms", NAN) * 1e6 / vertex_frames
	var own_ms: float = split.get("skin_ms", NAN) + split.get("encode_ms", NAN) + split.get("build_ms", NAN)
	var out := {
		"vertex_frames": int(vertex_frames),
		"split_ns_per_vertex_frame": ns,
		"own_ms": own_ms,
		"own_vs_sample": own_ms / split.get("sample_ms", NAN),
	}
	var vat_ms := NAN
	for r in results:
		if r.baker == "vat_crowd":
			vat_ms = r.ms
	for r in results:
		if r.baker != "vat_crowd":
			out[r.baker + "_vs_vat_crowd"] = r.ms / vat_ms
	return out


## The .glb under CORPUS_DIR with the most vertices (what vat_crowd bakes: every visible mesh's surfaces), measured
## by instancing each: {path, vertices, considered: [{path, vertices}], note}.
func _find_corpus_character() -> Dictionary:
	var found := {"path": "", "vertices": 0, "considered": [], "note": ""}
	if not DirAccess.dir_exists_absolute(CORPUS_DIR):
		found.note = "%s does not exist (no ../shared/assets beside the checkout, or $VAT_CROWD_ASSETS unset): corpus character skipped" % CORPUS_DIR
		return found
	for file in DirAccess.get_files_at(CORPUS_DIR):
		if file.get_extension().to_lower() != "glb":
			continue
		var path := CORPUS_DIR.path_join(file)
		var packed := load(path) as PackedScene
		if packed == null:
			push_warning("bench_bake: cannot load %s; not considered" % path)
			continue
		var root := packed.instantiate()
		var vertices := 0
		for mi in Util.find_meshes(root):
			for s in mi.mesh.get_surface_count():
				vertices += mi.mesh.surface_get_array_len(s)
		var has_player := Util.find_first(root, "AnimationPlayer") != null
		root.free()
		found.considered.append({"path": path, "vertices": vertices, "animated": has_player})
		if has_player and vertices > found.vertices:
			found.path = path
			found.vertices = vertices
	if found.path.is_empty():
		found.note = "no animated .glb in %s: corpus character skipped" % CORPUS_DIR
	else:
		print("bench_bake: corpus character %s (%d vertices, the most of %d .glb files)" % [
			found.path, found.vertices, found.considered.size()])
	return found


# --- (a) vat_crowd -------------------------------------------------------------------------------------------

func _bench_vat(reps: int) -> Dictionary:
	var times: Array = []
	var stats: Array = []
	var va: Resource = null
	for r in reps:
		va = ClassDB.instantiate("VertexAnimation")
		va.set("source_scene", _packed)
		va.set("fps", FPS)
		# The other bakers write one column per source vertex: compare like with like, and time
		# the LOD chain on its own below.
		if "lod_enabled" in va:
			va.set("lod_enabled", false)
		var t0 := Time.get_ticks_usec()
		var err: int = va.call("bake")
		var ms := (Time.get_ticks_usec() - t0) / 1000.0
		if err != OK:
			printerr("bench_bake: VertexAnimation.bake() failed: %s" % error_string(err))
			return {}
		times.append(ms)
		if va.has_method("get_bake_stats"):
			stats.append(va.call("get_bake_stats"))
		print("  vat_crowd rep %d: %.1f ms" % [r + 1, ms])
	# Clip table and frame times come from the resource, so every baker samples exactly the same times.
	_clips = va.call("get_clip_names")
	_times.clear()
	for c in _clips.size():
		var t := PackedFloat32Array()
		for k in int(va.call("get_clip_frame_count", c)):
			t.append(va.call("get_frame_time", c, k))
		_times.append(t)
	_vertex_count = va.get("vertex_count")
	_frame_count = va.get("frame_count")
	var split := {}
	if not stats.is_empty():
		for key in stats[0].keys():
			if not String(key).ends_with("_ms"):
				continue  # the stats also hold sizes and a summary text
			var vals: Array = []
			for s in stats:
				vals.append(float(s.get(key, NAN)))
			split[key] = Util.median(vals)
	else:
		push_warning("bench_bake: VertexAnimation has no get_bake_stats(); no split reported")
	_check_results["vat_crowd"] = va
	var lod := _bench_lod(reps)
	if not lod.is_empty():
		split["lod_ms"] = lod.lod_ms
		split["total_with_lod_ms"] = lod.total_ms
	return {"ms": Util.median(times), "reps": reps, "split": split}


## The same bake with the LOD chain (the default): medians of the chain's own time (lod_ms: build,
## silhouette checks, pruned VAT, level meshes) and of the whole bake. Empty without LOD support.
func _bench_lod(reps: int) -> Dictionary:
	var lod_ms := []
	var total_ms := []
	for r in reps:
		var va: Resource = ClassDB.instantiate("VertexAnimation")
		if not "lod_enabled" in va:
			return {}
		va.set("source_scene", _packed)
		va.set("fps", FPS)
		if va.call("bake") != OK:
			printerr("bench_bake: VertexAnimation.bake() with LODs failed")
			return {}
		var stats: Dictionary = va.call("get_bake_stats")
		lod_ms.append(float(stats.get("lod_ms", NAN)))
		total_ms.append(float(stats.get("total_ms", NAN)))
		print("  vat_crowd with LODs rep %d: lod %.1f ms of %.1f ms, %d levels %s" % [r + 1,
			lod_ms[-1], total_ms[-1], va.call("get_lod_count"), stats.get("lod_notes", [])])
	return {"lod_ms": Util.median(lod_ms), "total_ms": Util.median(total_ms)}


func _plan_clips_from_player() -> void:
	var root := _packed.instantiate()
	var player := Util.find_first(root, "AnimationPlayer") as AnimationPlayer
	_clips = Util.clip_names(player)
	_times.clear()
	_frame_count = 0
	for clip in _clips:
		var t := Util.frame_times(player.get_animation(clip), FPS)
		_times.append(t)
		_frame_count += t.size()
	root.free()


func _pick_check_frames() -> void:
	var row := 0
	for c in _clips.size():
		var n := _times[c].size()
		if c < 3:
			_check_frames.append([c, 0, row])
			_check_frames.append([c, n / 2, row + n / 2])
		row += n


# --- shared scene setup for the GDScript bakers ----------------------------------------------------------------

## Instances the character under the tree root, with the player switched to manual processing so only our seeks
## move it. Returns {root, player, skeleton, jobs}.
func _instance_character(with_tools: bool) -> Dictionary:
	var root := _packed.instantiate() as Node3D
	get_root().add_child(root)
	var player := Util.find_first(root, "AnimationPlayer") as AnimationPlayer
	player.callback_mode_process = AnimationMixer.ANIMATION_CALLBACK_MODE_PROCESS_MANUAL
	var jobs: Array[MeshJob] = []
	var total := 0
	for mi in Util.find_meshes(root):
		var job := MeshJob.new()
		job.path = root.get_path_to(mi)
		var skel := mi.get_node_or_null(mi.skeleton) as Skeleton3D
		var mesh := mi.mesh
		var has_bones := mesh.get_surface_count() > 0 and mesh.surface_get_arrays(0)[Mesh.ARRAY_BONES] != null
		job.skinned = skel != null and has_bones
		if job.skinned:
			_read_binds(mi, skel, job)
		for s in mesh.get_surface_count():
			var arrays := mesh.surface_get_arrays(s)
			job.rest.append_array(arrays[Mesh.ARRAY_VERTEX])
			if with_tools:
				var mdt := MeshDataTool.new()
				var err := mdt.create_from_surface(mesh as ArrayMesh, s)
				if err != OK:
					printerr("bench_bake: MeshDataTool.create_from_surface(%s, %d): %s" % [job.path, s, error_string(err)])
				job.tools.append(mdt)
		job.vertex_count = job.rest.size()
		total += job.vertex_count
		jobs.append(job)
	if _vertex_count == 0:
		_vertex_count = total
	elif total != _vertex_count:
		push_warning("bench_bake: GDScript bakers see %d vertices, vat_crowd %d" % [total, _vertex_count])
	var skeleton := Util.find_first(root, "Skeleton3D") as Skeleton3D
	return {"root": root, "player": player, "skeleton": skeleton, "jobs": jobs}


## Skin binds as Godot resolves them: a named bind finds its bone by name, else by index; without a Skin, Godot
## binds every bone with the inverse of its global rest.
func _read_binds(mi: MeshInstance3D, skel: Skeleton3D, job: MeshJob) -> void:
	var skin := mi.skin
	if skin == null:
		for b in skel.get_bone_count():
			job.bind_bones.append(b)
			job.bind_poses.append(skel.get_bone_global_rest(b).affine_inverse())
		return
	for i in skin.get_bind_count():
		var bone := skin.get_bind_bone(i)
		var bind_name := skin.get_bind_name(i)
		if bind_name != &"":
			bone = skel.find_bone(bind_name)
		job.bind_bones.append(bone)
		job.bind_poses.append(skin.get_bind_pose(i))


## The transform of `node` relative to `root` right after a seek, without waiting for a frame: a BoneAttachment3D
## follows its bone only when the skeleton's deferred update runs, so its bone pose is read directly.
func _relative_transform(node: Node3D, root: Node3D) -> Transform3D:
	var xf := Transform3D.IDENTITY
	var n: Node = node
	while n != null and n != root:
		if n is Node3D:
			var local: Transform3D = (n as Node3D).transform
			if n is BoneAttachment3D:
				var att := n as BoneAttachment3D
				var parent_skel := att.get_parent() as Skeleton3D
				if parent_skel != null and not att.use_external_skeleton and att.bone_idx >= 0 and not att.override_pose:
					local = parent_skel.get_bone_global_pose(att.bone_idx)
			xf = local * xf
		n = n.get_parent()
	return xf


func _check_index(row: int) -> int:
	for i in _check_frames.size():
		if _check_frames[i][2] == row:
			return i
	return -1


# --- (b) the MeshDataTool port ---------------------------------------------------------------------------------

func _bench_meshdatatool(max_reps: int) -> Dictionary:
	var times: Array = []
	for r in max_reps:
		var t0 := Time.get_ticks_usec()
		var img := _bake_meshdatatool(r == 0)
		var ms := (Time.get_ticks_usec() - t0) / 1000.0
		times.append(ms)
		print("  gdscript_meshdatatool rep %d: %.1f ms (%dx%d image)" % [r + 1, ms, img.get_width(), img.get_height()])
		if ms > SLOW_RUN_MS:
			break
	return {"ms": Util.median(times), "reps": times.size()}


func _bake_meshdatatool(keep_checks: bool) -> Image:
	var ch := _instance_character(true)
	var root: Node3D = ch.root
	var player: AnimationPlayer = ch.player
	var skel: Skeleton3D = ch.skeleton
	var jobs: Array[MeshJob] = []
	jobs.assign(ch.jobs)
	var img := Image.create(_vertex_count, _frame_count, false, Image.FORMAT_RGBAF)
	var checks: Array = []
	checks.resize(_check_frames.size())
	var row := 0
	for c in _clips.size():
		skel.reset_bone_poses()  # bones a clip does not key start from rest, as vat_crowd samples them
		player.play(_clips[c])
		for t in _times[c]:
			player.seek(t, true)
			var col := 0
			for job in jobs:
				var node := root.get_node(job.path) as Node3D
				var pre := _relative_transform(node, root)
				var binds: Array[Transform3D] = []
				if job.skinned:
					for i in job.bind_bones.size():
						binds.append(skel.get_bone_global_pose(job.bind_bones[i]) * job.bind_poses[i])
				for mdt in job.tools:
					for v in mdt.get_vertex_count():
						var p := mdt.get_vertex(v)
						if job.skinned:
							var bones := mdt.get_vertex_bones(v)
							var weights := mdt.get_vertex_weights(v)
							var skinned := p
							for j in bones.size():
								var w := weights[j]
								if w >= 1.1920929e-07:
									skinned += (binds[bones[j]] * p - p) * w
							p = skinned
						p = pre * p
						img.set_pixel(col, row, Color(p.x, p.y, p.z, 1.0))
						col += 1
			if keep_checks:
				var ci := _check_index(row)
				if ci >= 0:
					var pts := PackedVector3Array()
					for v in _vertex_count:
						var px := img.get_pixel(v, row)
						pts.append(Vector3(px.r, px.g, px.b))
					checks[ci] = pts
			row += 1
	player.stop()
	root.queue_free()
	if keep_checks:
		_check_results["gdscript_meshdatatool"] = checks
	return img


# --- (c) the bake_mesh_from_current_skeleton_pose loop ----------------------------------------------------------

func _bench_bake_mesh(reps: int) -> Dictionary:
	var times: Array = []
	for r in reps:
		var t0 := Time.get_ticks_usec()
		var img: Image = await _bake_with_bake_mesh(r == 0)
		var ms := (Time.get_ticks_usec() - t0) / 1000.0
		times.append(ms)
		print("  gdscript_bake_mesh rep %d: %.1f ms (%dx%d image)" % [r + 1, ms, img.get_width(), img.get_height()])
		await process_frame  # let the freed character go before the next run
	return {"ms": Util.median(times), "reps": reps}


func _bake_with_bake_mesh(keep_checks: bool) -> Image:
	var ch := _instance_character(false)
	var root: Node3D = ch.root
	var player: AnimationPlayer = ch.player
	var skeleton: Skeleton3D = ch.skeleton
	var jobs: Array[MeshJob] = []
	jobs.assign(ch.jobs)
	var nodes: Array[MeshInstance3D] = []
	for job in jobs:
		nodes.append(root.get_node(job.path) as MeshInstance3D)
	await process_frame  # the skins reach the rendering server only after the character's first frame in the tree
	var bytes := PackedByteArray()
	var checks: Array = []
	checks.resize(_check_frames.size())
	var row := 0
	for c in _clips.size():
		skeleton.reset_bone_poses()  # bones a clip does not key start from rest, as vat_crowd samples them
		player.play(_clips[c])
		for t in _times[c]:
			player.seek(t, true)
			await process_frame  # the skeleton pushes its pose to the rendering server's skin at the frame
			var frame := PackedVector3Array()
			var to_root := root.global_transform.affine_inverse()
			for i in jobs.size():
				var mi := nodes[i]
				var pre := to_root * mi.global_transform
				if jobs[i].skinned:
					var posed := mi.bake_mesh_from_current_skeleton_pose()
					for s in posed.get_surface_count():
						frame.append_array(pre * PackedVector3Array(posed.surface_get_arrays(s)[Mesh.ARRAY_VERTEX]))
				else:
					frame.append_array(pre * jobs[i].rest)
			bytes.append_array(frame.to_byte_array())
			if keep_checks:
				var ci := _check_index(row)
				if ci >= 0:
					checks[ci] = frame
			row += 1
	var img := Image.create_from_data(_vertex_count, _frame_count, false, Image.FORMAT_RGBF, bytes)
	player.stop()
	root.queue_free()
	if keep_checks:
		_check_results["gdscript_bake_mesh"] = checks
	return img


# --- checks and report ------------------------------------------------------------------------------------------

## Largest vertex distance between the bakers on the check frames, relative to the bounds' diagonal: the bakers
## must agree, or the timings compare different work.
func _compare() -> Dictionary:
	var ref: Array = _check_results.get("gdscript_bake_mesh", [])
	if ref.is_empty() or ref[0] == null:
		return {}
	var box := AABB(ref[0][0], Vector3.ZERO)
	for pts in ref:
		for p in pts:
			box = box.expand(p)
	var diag := maxf(box.size.length(), 1e-12)
	var out := {}
	for baker in ["gdscript_meshdatatool", "vat_crowd"]:
		if not _check_results.has(baker):
			continue
		var worst := 0.0
		for i in _check_frames.size():
			var a: PackedVector3Array = ref[i]
			var b: PackedVector3Array
			if baker == "vat_crowd":
				b = _check_results[baker].call("decode_frame", _check_frames[i][0], _check_frames[i][1])
			else:
				b = _check_results[baker][i]
			if a.size() != b.size():
				push_warning("bench_bake: %s frame has %d vertices, gdscript_bake_mesh %d" % [baker, b.size(), a.size()])
				worst = INF
				continue
			for v in a.size():
				worst = maxf(worst, a[v].distance_to(b[v]))
		out[baker + "_vs_bake_mesh_rel_error"] = worst / diag
		if worst / diag > DISAGREE_REL_ERROR:
			push_warning("bench_bake: %s and gdscript_bake_mesh disagree (%s of the diagonal): the timings compare different work"
				% [baker, Util.sci(worst / diag)])
		print("bench_bake: check %s vs gdscript_bake_mesh: max vertex error %s of the bounds' diagonal (%d frames)"
			% [baker, Util.sci(worst / diag), _check_frames.size()])
	return out


func _print_table(results: Array, split: Dictionary, vat_reps: int) -> void:
	print("")
	print("bake benchmark: %s, %d vertices, %d frames (%d clips at %s fps)" % [
		_scene_path, _vertex_count, _frame_count, _clips.size(), FPS])
	print(Util.pad("baker", 24) + Util.pad("ms", 12, true) + Util.pad("reps", 6, true) + Util.pad("vs vat_crowd", 14, true))
	var vat_ms := NAN
	for r in results:
		if r.baker == "vat_crowd":
			vat_ms = r.ms
	for r in results:
		var ratio := "" if is_nan(vat_ms) else "%.1fx" % (r.ms / vat_ms)
		print(Util.pad(r.baker, 24) + Util.pad("%.2f" % r.ms, 12, true) + Util.pad(str(r.repetitions), 6, true)
			+ Util.pad(ratio, 14, true))
	if not is_nan(vat_ms):
		for r in results:
			if r.baker != "vat_crowd":
				print("%s / vat_crowd = %.1fx%s" % [r.baker, r.ms / vat_ms,
					" (goal: >= %.0f)" % GOAL_VS_MESHDATATOOL if r.baker == "gdscript_meshdatatool" else ""])
	if not split.is_empty():
		var parts := PackedStringArray()
		for key in split.keys():
			parts.append("%s=%.2f" % [key, split[key]])
		print("vat_crowd split (median of %d): %s" % [vat_reps, ", ".join(parts)])
		var total: float = split.get("total_ms", vat_ms)
		if split.has("sample_ms") and total > 0.0:
			print("  Godot pose sampling %.0f%%, skinning %.0f%%, encoding %.0f%% of total" % [
				100.0 * split.sample_ms / total, 100.0 * split.get("skin_ms", 0.0) / total,
				100.0 * split.get("encode_ms", 0.0) / total])


## One row per character: vat_crowd's split per vertex-frame, its own work against sampling, and the GDScript
## MeshDataTool port against the whole bake, with the issue's goals.
func _print_summary(characters: Array, corpus: Dictionary) -> void:
	print("")
	print("vat_crowd per vertex-frame (ns; medians of the split): own = skin + encode + build")
	print(Util.pad("character", 36) + Util.pad("v x f", 14, true) + Util.pad("sample", 8, true)
		+ Util.pad("skin", 8, true) + Util.pad("encode", 8, true) + Util.pad("build", 8, true)
		+ Util.pad("own/sample", 12, true) + Util.pad("mdt/vat", 10, true))
	for c in characters:
		if not c.has("split_ns_per_vertex_frame"):
			print(Util.pad(c.character, 36) + "  (no split)")
			continue
		var ns: Dictionary = c.split_ns_per_vertex_frame
		print(Util.pad(c.character.get_file(), 36) + Util.pad("%dx%d" % [c.vertices, c.frames], 14, true)
			+ Util.pad("%.2f" % ns.sample, 8, true) + Util.pad("%.2f" % ns.skin, 8, true)
			+ Util.pad("%.2f" % ns.encode, 8, true) + Util.pad("%.2f" % ns.build, 8, true)
			+ Util.pad("%.2fx" % c.own_vs_sample, 12, true)
			+ Util.pad("%.1fx" % c.get("gdscript_meshdatatool_vs_vat_crowd", NAN), 10, true))
	print("goals: own/sample <= %.1fx, mdt/vat >= %.0fx" % [GOAL_OWN_VS_SAMPLE, GOAL_VS_MESHDATATOOL])
	if not corpus.note.is_empty():
		print("note: " + corpus.note)

