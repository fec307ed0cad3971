## Helpers shared by the benchmark scripts (bench_bake.gd, bench_update.gd).
## Loaded with preload(), so the scripts also run without the global class cache.
extends RefCounted


## Parsed user arguments (after "--"): {"quick": bool, "full": bool, "out": String, "scene": String ("" = the default)}.
static func parse_args() -> Dictionary:
	var args := OS.get_cmdline_user_args()
	var result := {"quick": false, "full": false, "out": "", "scene": "", "paths": PackedStringArray(), "actors": PackedInt32Array(),
		"scene_nodes": 0}
	var i := 0
	while i < args.size():
		var a: String = args[i]
		if a == "--quick":
			result.quick = true
		elif a == "--full":
			result.full = true
		elif a == "--out" and i + 1 < args.size():
			i += 1
			result.out = args[i]
		elif a.begins_with("--out="):
			result.out = a.substr(6)
		elif a == "--paths" and i + 1 < args.size():
			i += 1
			result.paths = args[i].split(",", false)
		elif a == "--actors" and i + 1 < args.size():
			i += 1
			for count in args[i].split(",", false):
				result.actors.append(count.to_int())
		elif a == "--scene" and i + 1 < args.size():
			i += 1
			result.scene = args[i]
		elif a == "--scene-nodes" and i + 1 < args.size():
			i += 1
			result.scene_nodes = maxi(args[i].to_int(), 0)
		else:
			push_warning("bench: unknown argument '%s' ignored" % a)
		i += 1
	return result


## Median of a list of numbers (the mean of the two middle ones for an even count).
static func median(values: Array) -> float:
	if values.is_empty():
		return NAN
	var sorted := values.duplicate()
	sorted.sort()
	var n := sorted.size()
	if n % 2 == 1:
		return float(sorted[n / 2])
	return 0.5 * (float(sorted[n / 2 - 1]) + float(sorted[n / 2]))


## Writes `data` as JSON to an absolute path (folders created); returns OK or the error.
static func write_json(path: String, data: Dictionary) -> Error:
	if path.is_empty():
		return OK
	var dir_err := DirAccess.make_dir_recursive_absolute(path.get_base_dir())
	if dir_err != OK and not DirAccess.dir_exists_absolute(path.get_base_dir()):
		printerr("bench: cannot create folder '%s': %s" % [path.get_base_dir(), error_string(dir_err)])
		return dir_err
	var f := FileAccess.open(path, FileAccess.WRITE)
	if f == null:
		var err := FileAccess.get_open_error()
		printerr("bench: cannot write '%s': %s" % [path, error_string(err)])
		return err
	f.store_string(JSON.stringify(data, "  ", false) + "\n")
	f.close()
	print("bench: wrote %s" % path)
	return OK


## Left-aligned / right-aligned fixed-width text for the printed tables.
static func pad(text: String, width: int, right := false) -> String:
	return text.lpad(width) if right else text.rpad(width)


## True if `node` and all its Node3D ancestors up to (and including) `root` are visible.
static func visible_in(node: Node, root: Node) -> bool:
	var n := node
	while n != null:
		if n is Node3D and not (n as Node3D).visible:
			return false
		if n == root:
			break
		n = n.get_parent()
	return true


## Every visible MeshInstance3D under `root` with a mesh, in depth-first scene order
## (the order vat_crowd merges them in).
static func find_meshes(root: Node) -> Array[MeshInstance3D]:
	var out: Array[MeshInstance3D] = []
	_collect_meshes(root, root, out)
	return out


static func _collect_meshes(node: Node, root: Node, out: Array[MeshInstance3D]) -> void:
	if node is MeshInstance3D and (node as MeshInstance3D).mesh != null and visible_in(node, root):
		out.append(node)
	for child in node.get_children():
		_collect_meshes(child, root, out)


## The first node of a class under `root` (depth first), or null.
static func find_first(root: Node, klass: String) -> Node:
	if root.is_class(klass):
		return root
	for child in root.get_children():
		var found := find_first(child, klass)
		if found != null:
			return found
	return null


## The first node called `node_name` under `root` (depth first), or null.
static func find_named(root: Node, node_name: String) -> Node:
	if root.name == node_name:
		return root
	for child in root.get_children():
		var found := find_named(child, node_name)
		if found != null:
			return found
	return null


## Animation clip names of a player, without Godot's "RESET" helper track.
static func clip_names(player: AnimationPlayer) -> PackedStringArray:
	var names := PackedStringArray()
	for n in player.get_animation_list():
		if n != "RESET":
			names.append(n)
	return names


## Sample times of one clip with vat_crowd's convention (vat_core clip.rs): n = max(1, round(duration * fps))
## intervals; a looped clip has n frames at k * duration / n (no duplicate at the wrap), an unlooped one n + 1
## frames, the last exactly at the end.
static func frame_times(anim: Animation, fps: float) -> PackedFloat32Array:
	var duration := anim.length
	var n := maxi(1, roundi(duration * fps))
	var looped := anim.loop_mode != Animation.LOOP_NONE
	var count := n if looped else n + 1
	var times := PackedFloat32Array()
	times.resize(count)
	for k in count:
		times[k] = k * duration / n
	return times


## `x` in short scientific notation, e.g. "4.38e-08" (GDScript's % has no %e).
static func sci(x: float) -> String:
	if x == 0.0 or is_nan(x) or is_inf(x):
		return str(x)
	var e := floori(log(absf(x)) / log(10.0))
	return "%.2fe%d" % [x / pow(10.0, e), e]
