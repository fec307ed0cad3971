# An editor session as a user has it, run by `cargo xtask test --tier package` in the project
# the addon zip was installed into: bake through the inspector button's callable, save twice,
# build a scene with every vat_crowd class, select each in the inspector, save the scene,
# reopen it; capture the editor preview in the 3D viewport (preview_check.gd) and check that a
# scene saved while it shows holds neither preview instances nor the clock; read every class's
# F1 help (docs_check.gd). The log must hold no panic, no ERROR and end with
# "EDITOR CHECK: passed".
# Installed as its own plugin next to vat_crowd; does nothing unless Godot got
# `-- --vat-editor-check`.
@tool
extends EditorPlugin

const CHARACTER := "res://character.glb"
const BAKED := "res://character.res"
const SCENE := "res://crowd.tscn"
const PreviewCheck := preload("preview_check.gd")
const DocsCheck := preload("docs_check.gd")

var _failures: PackedStringArray = []


func _enter_tree() -> void:
	if OS.get_cmdline_user_args().has("--vat-editor-check"):
		_run.call_deferred()


func _frames(n: int) -> void:
	for i in n:
		await get_tree().process_frame


func _check(ok: bool, what: String) -> void:
	if not ok:
		_failures.append(what)
		printerr("EDITOR CHECK FAIL: " + what)


func _run() -> void:
	await _frames(5)
	var fs := EditorInterface.get_resource_filesystem()
	while fs.is_scanning():
		await _frames(1)
	print("EDITOR CHECK: baking through the inspector button")
	var va := VertexAnimation.new()
	va.source_scene = load(CHARACTER)
	_check(va.save_to(BAKED) == OK, "first save of the unbaked resource")
	va = load(BAKED)
	var uid := ResourceLoader.get_resource_uid(BAKED)
	var button: Callable = va.get("bake_button")
	_check(button.is_valid(), "the Bake button's callable exists")
	button.call()
	await _frames(2)
	_check(va.is_baked(), "the Bake button baked the resource")
	var reloaded: VertexAnimation = ResourceLoader.load(BAKED, "", ResourceLoader.CACHE_MODE_IGNORE)
	_check(reloaded != null and reloaded.is_baked(), "the Bake button saved the bake to its file")
	_check(ResourceLoader.get_resource_uid(BAKED) == uid, "re-saving kept the resource's UID (%d -> %d)" % [uid, ResourceLoader.get_resource_uid(BAKED)])
	await _frames(5)
	for f in DirAccess.get_files_at("res://"):
		_check(not f.contains("vat-crowd-save"), "no temporary file is left (%s)" % f)

	print("EDITOR CHECK: a scene with every class")
	var root := Node3D.new()
	root.name = "Crowd"
	var single := AnimatedMeshInstance.new()
	single.name = "Single"
	single.animation = va
	root.add_child(single)
	var actors := AnimatedActorMeshInstance.new()
	actors.name = "Actors"
	actors.models = [va]
	root.add_child(actors)
	var baker := VertexAnimationBaker.new()
	baker.name = "Baker"
	root.add_child(baker)
	for n in root.get_children():
		n.owner = root
	var packed := PackedScene.new()
	_check(packed.pack(root) == OK, "pack the scene")
	root.free()
	_check(ResourceSaver.save(packed, SCENE) == OK, "save the scene")
	EditorInterface.open_scene_from_path(SCENE)
	await _frames(20)
	var scene := EditorInterface.get_edited_scene_root()
	_check(scene != null, "the scene opens")
	if scene != null:
		var preview := PreviewCheck.new(self)
		await preview.run(scene, va)
		_failures.append_array(preview.failures)
		print("EDITOR CHECK: saving while the preview shows")
		EditorInterface.mark_scene_as_unsaved()
		EditorInterface.save_scene()
		await _frames(10)
		var saved := FileAccess.get_file_as_string(SCENE)
		_check(saved.contains("preview_count = 4"), "the preview setting is saved (the check sees stored properties)")
		_check(saved.count("[node ") == 4, "the saved scene holds its 4 nodes and no other:\n" + saved)
		_check(not saved.contains("MultiMesh"), "no preview MultiMesh is saved")
		_check(not saved.contains("\ntime ="), "the crowd clock is not saved while the preview runs it")
		EditorInterface.reload_scene_from_path(SCENE)
		await _frames(30)
		scene = EditorInterface.get_edited_scene_root()
		var reopened: Node = scene.get_node("Single")
		_check(reopened.get_instance_count() == 4, "the reopened scene previews from its setting (%d instances)" % reopened.get_instance_count())
		var single_node := scene.get_node("Single")
		# As a @tool script would: instances of its own need the preview off.
		single_node.preview_count = 0
		await _frames(2)
		single_node.add_instance(Transform3D.IDENTITY, 0)
		for n in scene.get_children():
			print("EDITOR CHECK: inspecting " + n.name)
			EditorInterface.edit_node(n)
			await _frames(20)
	print("EDITOR CHECK: inspecting the VertexAnimation")
	EditorInterface.edit_resource(va)
	await _frames(30)
	EditorInterface.mark_scene_as_unsaved()
	EditorInterface.save_scene()
	await _frames(10)
	var text := FileAccess.get_file_as_string(SCENE)
	_check(not text.contains("\ntime ="), "the crowd clock is not stored in the scene")
	print("EDITOR CHECK: reopening the scene")
	EditorInterface.reload_scene_from_path(SCENE)
	await _frames(30)
	_check(EditorInterface.get_edited_scene_root() != null, "the scene reopens")
	EditorInterface.close_scene()
	await _frames(10)
	var docs := DocsCheck.new(self)
	await docs.run()
	_failures.append_array(docs.failures)
	print("EDITOR CHECK: " + ("passed" if _failures.is_empty() else "FAILED: " + ", ".join(_failures)))
	get_tree().quit(0 if _failures.is_empty() else 1)
