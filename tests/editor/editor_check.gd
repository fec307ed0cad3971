# An editor session as a user has it, run by `cargo xtask test --tier package` in the project
# the addon zip was installed into: bake through the inspector button's callable, save twice;
# bake RobotExpressive through the inspector's Bake panel (clips picked in the clip picker, a
# cancelled bake that changes nothing, a finished one with LOD meshes undone and redone), and a baker's target
# through the baker's Bake panel (undone and redone); in both inspectors the Bake panel must be the
# first entry, in no group and visible as the inspector opens; build a scene with every vat_crowd class,
# select each in the inspector, save the scene, reopen it; capture the editor preview in the 3D
# viewport (preview_check.gd) and check that a scene saved while it shows holds neither preview
# instances nor the clock; read every class's F1 help (docs_check.gd). The log must hold no
# panic, no ERROR and end with "EDITOR CHECK: passed".
# Installed as its own plugin next to vat_crowd; does nothing unless Godot got
# `-- --vat-editor-check`.
@tool
extends EditorPlugin

const CHARACTER := "res://character.glb"
const BAKED := "res://character.res"
const SCENE := "res://crowd.tscn"
const PreviewCheck := preload("preview_check.gd")
const DocsCheck := preload("docs_check.gd")
const ROBOT := "res://robot.glb"
const ROBOT_BAKED := "res://robot.res"
## Clips the picker keeps for the panel's bake (fewer than the robot's 14: a shorter bake).
const PICKED := 3
## Frames a stepped bake may take before the check gives up on it.
const BAKE_FRAMES := 3000

var _failures: PackedStringArray = []


func _enter_tree() -> void:
	if OS.get_cmdline_user_args().has("--vat-editor-check"):
		_run.call_deferred()


func _frames(n: int) -> void:
	for i in n:
		await get_tree().process_frame


func _check(ok: bool, what: String) -> bool:
	if not ok:
		_failures.append(what)
		printerr("EDITOR CHECK FAIL: " + what)
	return ok


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
	var reason: String = va.get_bake_stats().get("storage_reason", "")
	print("EDITOR CHECK: the Bake button stored %s: %s" % [va.get_bake_stats().get("storage", "?"), reason])
	_check(reason.begins_with("Auto:"), "the Bake button's bake picked its storage by the default, Auto (%s)" % reason)
	var reloaded: VertexAnimation = ResourceLoader.load(BAKED, "", ResourceLoader.CACHE_MODE_IGNORE)
	_check(reloaded != null and reloaded.is_baked(), "the Bake button saved the bake to its file")
	_check(ResourceLoader.get_resource_uid(BAKED) == uid, "re-saving kept the resource's UID (%d -> %d)" % [uid, ResourceLoader.get_resource_uid(BAKED)])
	await _frames(5)
	for f in DirAccess.get_files_at("res://"):
		_check(not f.contains("vat-crowd-save"), "no temporary file is left (%s)" % f)

	await _inspector_bake()

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
		await _baker_panel_bake(scene)
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


## The first node under the inspector that carries `meta`, or whose script is `script_file`.
func _in_inspector(meta: StringName, script_file: String) -> Node:
	for n in EditorInterface.get_inspector().find_children("*", "", true, false):
		if meta != &"" and n.has_meta(meta):
			return n
		var s: Script = n.get_script()
		if script_file != "" and s != null and s.resource_path.get_file() == script_file:
			return n
	return null


## The inspector's entries: what a user reads in it, top-down (property editors, class headers,
## groups, and controls plugins add, such as the Bake panel).
func _is_entry(n: Node) -> bool:
	return n.has_meta(&"vat_crowd_bake_panel") or n.is_class("EditorProperty") \
		or n.is_class("EditorInspectorSection") or n.is_class("EditorInspectorCategory") \
		or n.is_class("EditorInspectorArray")


## The Bake panel is the first entry of the inspector (before every property, class header and
## group), in no group and visible as the inspector opens (no group to unfold), and the plain
## Bake button it replaces leaves no empty group behind.
func _check_panel_on_top(panel: Control, cls: String) -> void:
	var inspector := EditorInterface.get_inspector()
	_check(panel.is_visible_in_tree(), "%s: the Bake panel is visible as the inspector opens" % cls)
	var up := panel.get_parent()
	while up != null and up != inspector:
		_check(not up.is_class("EditorInspectorSection"), "%s: the Bake panel is in no group" % cls)
		up = up.get_parent()
	var first: Node = null
	for n in inspector.find_children("*", "Control", true, false):
		if (n as Control).is_visible_in_tree() and _is_entry(n):
			first = n
			break
	_check(first == panel, "%s: the Bake panel is the inspector's first entry (first: %s %s)" % [cls,
		first.get_class() if first != null else "none", first.get("label") if first != null else ""])
	for section in inspector.find_children("*", "EditorInspectorSection", true, false):
		var entries := section.find_children("*", "Control", true, false).filter(_is_entry)
		_check(not entries.is_empty(), "%s: no empty group in the inspector" % cls)


## The clips of the robot's own AnimationPlayer (Godot's list, RESET left out).
func _robot_clips() -> PackedStringArray:
	var node := (load(ROBOT) as PackedScene).instantiate()
	var player: AnimationPlayer = node.find_children("*", "AnimationPlayer", true, false)[0]
	var out := PackedStringArray()
	for n in player.get_animation_list():
		if n != "RESET":
			out.append(n)
	node.free()
	return out


## Waits until the plugin's bake runner is idle (or BAKE_FRAMES have passed).
func _until_idle(runner: Node) -> void:
	for i in BAKE_FRAMES:
		if not runner.is_baking():
			return
		await _frames(1)
	_check(false, "the inspector's bake ended within %d frames" % BAKE_FRAMES)


func _inspector_bake() -> void:
	print("EDITOR CHECK: the Bake panel: RobotExpressive, clip picker, Cancel, undo, redo")
	var va := VertexAnimation.new()
	va.source_scene = load(ROBOT)
	# LOD meshes on (the default). The robot's LOD2 fails the silhouette check and would be dropped
	# with a warning, which this check counts as noise; a target between LOD1's triangle count (at
	# most 60% of its 3,237) and the source's makes LOD1 the coarsest level instead (said with a
	# plain print).
	va.lod_enabled = true
	va.lod2_triangles = 2500
	_check(va.save_to(ROBOT_BAKED) == OK, "save the unbaked robot")
	va = load(ROBOT_BAKED)
	EditorInterface.edit_resource(va)
	await _frames(10)
	var truth := _robot_clips()
	var picker := _in_inspector(&"", "clip_picker.gd")
	if not _check(picker != null, "the inspector shows the clip picker"):
		return
	var listed := PackedStringArray()
	for box: CheckBox in picker.boxes:
		listed.append(box.text)
		_check(box.button_pressed, "clip %s starts ticked (empty clips: every clip)" % box.text)
	_check(listed == truth, "the picker lists the scene's clips %s (got %s)" % [truth, listed])
	for box: CheckBox in picker.boxes.slice(PICKED):
		box.button_pressed = false
	await _frames(2)
	_check(va.clips == truth.slice(0, PICKED), "the picker wrote clips (%s)" % [va.clips])
	var panel := _in_inspector(&"vat_crowd_bake_panel", "")
	if not _check(panel != null, "the inspector shows the Bake panel"):
		return
	_check_panel_on_top(panel, "VertexAnimation")
	var runner: Node = panel.runner
	var estimate: Dictionary = va.estimate_bake()
	_check(estimate.get("bytes", 0) > 0, "the estimate has bytes (%s)" % estimate)
	_check(panel.estimate_label.text.begins_with("Estimate:"), "the panel shows the estimate (%s)" % panel.estimate_label.text)

	var progress := []
	va.bake_progress.connect(func(done: int, total: int) -> void: progress.append([done, total]))
	var before := va.get_baked_state()
	var file_before := FileAccess.get_md5(ROBOT_BAKED)
	panel.bake_button.pressed.emit()
	for i in BAKE_FRAMES:
		if not progress.is_empty():
			break
		await _frames(1)
	_check(runner.is_baking(), "the bake runs over frames")
	panel = _in_inspector(&"vat_crowd_bake_panel", "")
	panel.cancel_button.pressed.emit()
	await _until_idle(runner)
	_check(not va.is_baked(), "a cancelled bake leaves the robot unbaked")
	_check(va.get_baked_state() == before, "a cancelled bake changes no baked field")
	_check(FileAccess.get_md5(ROBOT_BAKED) == file_before, "a cancelled bake saves nothing")

	progress.clear()
	panel = _in_inspector(&"vat_crowd_bake_panel", "")
	panel.bake_button.pressed.emit()
	await _frames(1)
	await _until_idle(runner)
	var expected := []
	for i in PICKED:
		expected.append([i + 1, PICKED])
	_check(progress == expected, "bake_progress in order up to the total: %s" % [progress])
	_check(va.is_baked() and va.get_clip_count() == PICKED, "the panel baked the picked clips")
	var levels := va.get_lod_count()
	print("EDITOR CHECK: baked %d LOD level(s): %s" % [levels, va.get_bake_stats().get("summary", "")])
	_check(levels == 2, "the panel's bake built LOD0 and LOD1 (%d levels)" % levels)
	var lods: Array = va.get_bake_stats().get("lods", [])
	_check(lods.size() == levels and lods.all(func(l: Dictionary) -> bool: return l["vertices"] > 0 and l.has("holes_pct")),
		"the bake stats list each level's vertices and holes (%s)" % [lods])
	if levels == 2:
		_check(va.get_lod_mesh(1).get_faces().size() < va.get_lod_mesh(0).get_faces().size(), "LOD1 has fewer triangles than LOD0")
	panel = _in_inspector(&"vat_crowd_bake_panel", "")
	_check(panel != null and panel.summary_label.text.contains("LOD1"), "the panel's summary shows the levels (%s)" % (panel.summary_label.text if panel != null else "no panel"))
	_check(FileAccess.get_md5(ROBOT_BAKED) != file_before, "the finished bake was saved")
	var after := va.get_baked_state()
	var undo_redo := EditorInterface.get_editor_undo_redo()
	var history := undo_redo.get_history_undo_redo(undo_redo.get_object_history_id(va))
	_check(history.get_current_action_name() == "Bake VertexAnimation", "the bake is one undo action (%s)" % history.get_current_action_name())
	history.undo()
	await _frames(2)
	_check(not va.is_baked() and va.get_baked_state() == before, "undo puts the unbaked state back")
	_check(va.get_lod_count() == 0, "undo removed the LOD meshes")
	history.redo()
	await _frames(2)
	_check(va.is_baked() and va.get_baked_state() == after, "redo puts the same bake back")
	_check(va.get_lod_count() == levels, "redo put the LOD levels back")
	EditorInterface.inspect_object(null)
	await _frames(5)


## A VertexAnimationBaker's Bake panel: a character under a baker (not saved with the scene), one
## target, baked in steps, one undo action for the targets.
func _baker_panel_bake(scene: Node) -> void:
	print("EDITOR CHECK: the Bake panel of a VertexAnimationBaker")
	var baker := VertexAnimationBaker.new()
	baker.name = "PanelBaker"
	baker.add_child((load(CHARACTER) as PackedScene).instantiate())
	scene.add_child(baker)
	var target := VertexAnimation.new()
	baker.targets = [target] as Array[VertexAnimation]
	var finished := []
	baker.bake_finished.connect(func(error: int, _summary: String) -> void: finished.append(error))
	EditorInterface.edit_node(baker)
	await _frames(10)
	var panel := _in_inspector(&"vat_crowd_bake_panel", "")
	if _check(panel != null, "the baker's inspector shows the Bake panel"):
		_check_panel_on_top(panel, "VertexAnimationBaker")
		panel.bake_button.pressed.emit()
		await _frames(1)
		await _until_idle(panel.runner)
		_check(target.is_baked(), "the baker's panel baked its target")
		_check(finished == [OK], "bake_finished once, OK (%s)" % [finished])
		var undo_redo := EditorInterface.get_editor_undo_redo()
		var history := undo_redo.get_history_undo_redo(undo_redo.get_object_history_id(baker))
		_check(history.get_current_action_name() == "Bake VertexAnimationBaker targets", "the baker's bake is one undo action (%s)" % history.get_current_action_name())
		history.undo()
		_check(not target.is_baked(), "undo unbakes the baker's target")
		history.redo()
		_check(target.is_baked(), "redo bakes it again")
	EditorInterface.inspect_object(null)
	await _frames(2)
	scene.remove_child(baker)
	baker.free()
	await _frames(2)
