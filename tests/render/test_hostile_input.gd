# Every class of ours, every method and every property, with hostile values of their types, in a
# running scene under the real renderer. Classes, methods and properties come from ClassDB, so a
# new method is covered with no change here. Each method is called once per hostile value in each
# argument position (the other arguments plain), on a fresh object and on a prepared one (a baked
# model; crowds holding it with actors), and the crowds submit and draw after each method. The
# test fails on any Rust panic or script error (the log scan), a crash or hang (the runner), or a
# leak at exit; bad values must get errors, not panics. Methods that write files are not called
# (their paths would be hostile strings such as "idle" or "does not exist", written into the
# project), and the test fails when the repository (tests/ and the folders beside it) gains a file
# while it runs.
extends VatTest

const SOLDIER := "res://generated/soldier.tscn"
## Methods not called: they start or end a long job whose hostile inputs other tests cover.
const SKIP_METHODS := ["bake"]
## Engine callbacks our classes implement (called by Godot, but a script can call them too).
const CALLBACKS := ["_inspect_shader"]
## Methods not called because they write files (`dump_lod_input` exists in dev builds only); any
## method with a String argument named like a path or a file is left out too (`_writes_files`).
const WRITES_FILES := ["save_to", "dump_lod_input"]
## Folders the file check does not look into: Godot's caches, cargo's output, git's own data.
const UNWATCHED := [".godot", "target", ".git"]
var _baked: VertexAnimation
## The repository's files when the suite started (`_project_files`).
var _files_at_start: PackedStringArray


func _our_classes() -> PackedStringArray:
	var out := PackedStringArray()
	for c in ClassDB.get_class_list():
		if ClassDB.class_get_api_type(c) == ClassDB.API_EXTENSION and ClassDB.can_instantiate(c):
			out.append(c)
	out.sort()
	return out


func _freed() -> Object:
	var n := Node.new()
	n.free()
	return n


## Hostile values of a Variant type (those the type can hold).
func _hostile(type: int) -> Array:
	match type:
		TYPE_INT:
			return [-1, -2147483648, 2147483647, 1 << 40, -(1 << 62), 16777217]
		TYPE_FLOAT:
			return [NAN, INF, -INF, 1e30, -1e30, 65520.0, -0.0]
		TYPE_STRING:
			return ["", "does not exist", "x".repeat(5000)]
		TYPE_STRING_NAME:
			return [&"", &"does not exist"]
		TYPE_NODE_PATH:
			return [NodePath(""), NodePath("../../../nowhere"), NodePath(":x")]
		TYPE_VECTOR3:
			return [Vector3(NAN, 0, 0), Vector3(INF, -INF, 0), Vector3(1e30, 1e30, 1e30)]
		TYPE_AABB:
			return [AABB(Vector3(NAN, 0, 0), Vector3(-1, -1, -1)), AABB(Vector3.ZERO, Vector3(INF, 1, 1))]
		TYPE_TRANSFORM3D:
			return [Transform3D(Basis().scaled(Vector3(NAN, 1, 1)), Vector3.ZERO),
				Transform3D(Basis(Vector3.ZERO, Vector3.ZERO, Vector3.ZERO), Vector3(1e30, 0, 0)),
				Transform3D(Basis(), Vector3(INF, 0, 0))]
		TYPE_COLOR:
			return [Color(NAN, 0, 0), Color(1e30, -1e30, INF, 1)]
		TYPE_PACKED_INT32_ARRAY:
			return [PackedInt32Array(), PackedInt32Array([-1]), PackedInt32Array([2147483647, 0, 5]), PackedInt32Array([0, 0, 0, 0, 0, 0, 0])]
		TYPE_PACKED_FLOAT32_ARRAY:
			return [PackedFloat32Array(), PackedFloat32Array([NAN]), PackedFloat32Array([INF, 1e30, -1e30, 0, 0, 0, 0])]
		TYPE_PACKED_VECTOR3_ARRAY:
			return [PackedVector3Array(), PackedVector3Array([Vector3(NAN, 0, 0)]), PackedVector3Array([Vector3.ZERO, Vector3(INF, 0, 0)])]
		TYPE_PACKED_VECTOR4_ARRAY:
			return [PackedVector4Array(), PackedVector4Array([Vector4(NAN, 0, 0, 0)])]
		TYPE_PACKED_COLOR_ARRAY:
			return [PackedColorArray(), PackedColorArray([Color(NAN, 0, 0)])]
		TYPE_PACKED_STRING_ARRAY:
			return [PackedStringArray(), PackedStringArray(["", "nope", "nope"])]
		TYPE_PACKED_BYTE_ARRAY:
			return [PackedByteArray(), PackedByteArray([255, 0, 7])]
		TYPE_ARRAY:
			return [[], [null], [RefCounted.new(), 7, "x"]]
		TYPE_DICTIONARY:
			return [{}, {"nope": "abc", 7: NAN}]
		TYPE_OBJECT:
			return [null, _freed(), RefCounted.new()]
		TYPE_RID:
			return [RID(), rid_from_int64(0x7fff_ffff_1234)]
	return []


## A plain, valid value of a type (for the arguments not under test).
func _plain(type: int) -> Variant:
	match type:
		TYPE_INT:
			return 0
		TYPE_FLOAT:
			return 1.0
		TYPE_BOOL:
			return false
		TYPE_TRANSFORM3D:
			return Transform3D.IDENTITY
		TYPE_COLOR:
			return Color.WHITE
		TYPE_STRING, TYPE_STRING_NAME:
			return "idle"
	return type_convert(null, type)


## The object to hammer: fresh, or prepared (a baked model; crowds with the model and actors).
func _make(cls: String, prepared: bool) -> Object:
	if cls == "VertexAnimation":
		return _baked.duplicate() if prepared else ClassDB.instantiate(cls)
	var obj: Object = ClassDB.instantiate(cls)
	if obj is Node:
		root.add_child(obj)
	if prepared and obj.has_method("add_actor"):
		obj.set("models", [_baked])
		obj.call("begin")
		for i in 3:
			obj.call("add_actor", Transform3D(Basis(), Vector3(i, 0, 0)), 0, 0.0, 1.0)
			obj.call("add_model", 0, 0, Color.WHITE)
		obj.call("submit")
	elif prepared and obj.has_method("add_instance"):
		obj.set("animation", _baked)
		for i in 3:
			obj.call("add_instance", Transform3D(Basis(), Vector3(i, 0, 0)), 0)
		obj.call("submit")
	return obj


func _dispose(obj: Object) -> void:
	if obj is Node:
		obj.free()


## Whether method `m` (a ClassDB method dictionary) writes files: a known writer, or a String
## argument named like a path or a file.
func _writes_files(m: Dictionary) -> bool:
	if m["name"] in WRITES_FILES:
		return true
	for a: Dictionary in m["args"]:
		var arg: String = a["name"]
		if a["type"] == TYPE_STRING and (arg.contains("path") or arg.contains("file") or arg.contains("json")):
			return true
	return false


## Every file and link under the repository (the folder holding tests/), as paths relative to it,
## sorted; folders named in UNWATCHED are left out, links not followed.
func _project_files() -> PackedStringArray:
	var top := ProjectSettings.globalize_path("res://").simplify_path().get_base_dir()
	var out := PackedStringArray()
	var stack := [""]
	while not stack.is_empty():
		var rel: String = stack.pop_back()
		var dir := DirAccess.open(top.path_join(rel))
		if dir == null:
			continue
		dir.include_hidden = true
		dir.list_dir_begin()
		var name := dir.get_next()
		while name != "":
			var path := rel.path_join(name) if rel != "" else name
			if dir.current_is_dir() and not dir.is_link(name):
				if not name in UNWATCHED:
					stack.append(path)
			else:
				out.append(path)
			name = dir.get_next()
		dir.list_dir_end()
	out.sort()
	return out


## Fails when the repository has files now that it did not have in `before`.
func _check_no_new_files(before: PackedStringArray, during: String) -> void:
	var gained := PackedStringArray()
	for f in _project_files():
		var i := before.bsearch(f)
		if i >= before.size() or before[i] != f:
			gained.append(f)
	check(gained.is_empty(), "the repository gained files during %s: %s" % [during, ", ".join(gained)])


func before_all() -> void:
	_files_at_start = _project_files()
	check(not _files_at_start.is_empty(), "the file check sees the repository's files")
	_baked = VertexAnimation.new()
	_baked.source_scene = load(SOLDIER)
	_baked.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	_baked.clips = PackedStringArray(["idle", "walk"])
	_baked.bake()


func cases_methods() -> Array:
	return Array(_our_classes())


func after_all() -> void:
	_check_no_new_files(_files_at_start, "the suite")


func test_each_methods(cls: String) -> void:
	var files := _project_files()
	var calls := 0
	for prepared in [false, true]:
		var methods := ClassDB.class_get_method_list(cls, true)
		for m: Dictionary in methods:
			var name: String = m["name"]
			if (name.begins_with("_") and not name in CALLBACKS) or name in SKIP_METHODS or _writes_files(m):
				continue
			var args: Array = m["args"]
			var obj := _make(cls, prepared)
			for a in args.size():
				for bad in _hostile(args[a]["type"]):
					var values := []
					for b in args.size():
						values.append(bad if b == a else _plain(args[b]["type"]))
					obj.callv(name, values)
					calls += 1
			if args.is_empty():
				obj.call(name)
				calls += 1
			if obj.has_method("submit"):
				obj.call("submit")
			await frames(1)
			_dispose(obj)
	print("    %s: %d hostile calls" % [cls, calls])
	check(calls > 0, "%s has methods to call" % cls)
	_check_no_new_files(files, "%s's hostile calls" % cls)


func cases_properties() -> Array:
	return Array(_our_classes())


func test_each_properties(cls: String) -> void:
	var files := _project_files()
	var sets := 0
	for prepared in [false, true]:
		for p: Dictionary in ClassDB.class_get_property_list(cls, true):
			if not (p["usage"] & PROPERTY_USAGE_STORAGE or p["usage"] & PROPERTY_USAGE_EDITOR):
				continue
			var obj := _make(cls, prepared)
			for bad in _hostile(p["type"]):
				obj.set(p["name"], bad)
				obj.get(p["name"])
				sets += 1
			if obj.has_method("submit"):
				obj.call("submit")
			if obj.has_method("is_baked"):
				obj.call("is_baked")
				obj.call("decode_frame", 0, 0)
			await frames(1)
			_dispose(obj)
	print("    %s: %d hostile property sets" % [cls, sets])
	_check_no_new_files(files, "%s's hostile property sets" % cls)
