# Runs the inspector's bakes: one VertexAnimationBakeJob at a time, one step per frame, so the
# editor keeps drawing. A finished bake becomes one undoable action; a cancelled or failed one
# changes nothing. It lives under the plugin (not in the inspector, which rebuilds its controls
# whenever it likes), and the Bake panels show its state.
@tool
extends Node

## Emitted after each step of the running bake of `target`: `done` steps of `total`.
signal progress(target: Object, done: int, total: int)
## Emitted when the bake of `target` ends: OK, FAILED or ERR_SKIP (cancelled), and its summary or
## error.
signal ended(target: Object, error: int, message: String)

## Name of the undo action of a VertexAnimation's bake.
const ACTION_RESOURCE := "Bake VertexAnimation"
## Name of the undo action of a VertexAnimationBaker's bake (all its targets).
const ACTION_BAKER := "Bake VertexAnimationBaker targets"

## Where finished bakes are recorded (the plugin's).
var undo_redo: EditorUndoRedoManager
## The VertexAnimation or VertexAnimationBaker baking now, or null.
var target: Object = null
var _job: RefCounted = null


## Whether a bake is running.
func is_baking() -> bool:
	return _job != null


## The running job's steps done and in all ([0, 1] when idle).
func get_progress() -> Vector2i:
	if _job == null:
		return Vector2i(0, 1)
	return Vector2i(_job.get_done(), _job.get_total())


## Stops the running bake; nothing changes. Does nothing when idle.
func cancel() -> void:
	if _job != null:
		_job.cancel()


## Bakes `object` (a VertexAnimation or a VertexAnimationBaker) in steps; returns (as a coroutine)
## once it has ended. Returns at once when another bake is running.
func bake(object: Object) -> void:
	if _job != null:
		_toast("vat_crowd: a bake is already running; wait for it or cancel it", EditorToaster.SEVERITY_WARNING)
		return
	var job: RefCounted = object.start_bake()
	if job == null:
		ended.emit(object, FAILED, "the bake could not start (see the error in the Output panel)")
		return
	_job = job
	target = object
	var resources: Array = job.get_resources()
	var before := []
	for r: Resource in resources:
		before.append(r.get_baked_state())
	progress.emit(object, 0, job.get_total())
	while job.step():
		progress.emit(object, job.get_done(), job.get_total())
		await get_tree().process_frame
	var error: int = job.get_error()
	var message: String = job.get_message()
	if error == OK:
		progress.emit(object, job.get_total(), job.get_total())
		_record(object, resources, before)
		if object.is_class("VertexAnimation"):
			_save(object)
	_job = null
	target = null
	# A baker's own bake_finished signal already makes the plugin's toast.
	if object.is_class("VertexAnimation"):
		if error == OK:
			_toast("vat_crowd: " + message.get_slice("\n", 0), EditorToaster.SEVERITY_INFO)
		elif error == ERR_SKIP:
			_toast("vat_crowd: bake cancelled; nothing changed", EditorToaster.SEVERITY_INFO)
		else:
			_toast("vat_crowd: bake failed: " + message, EditorToaster.SEVERITY_ERROR)
	ended.emit(object, error, message)


# One action holding every resource's state before and after: undo puts the old bakes back
# (unbaked ones stay unbaked), redo the new ones. The bake is done already, so it is not run again.
func _record(object: Object, resources: Array, before: Array) -> void:
	if undo_redo == null:
		return
	var name := ACTION_RESOURCE if object.is_class("VertexAnimation") else ACTION_BAKER
	undo_redo.create_action(name, UndoRedo.MERGE_DISABLE, object)
	for i in resources.size():
		undo_redo.add_do_method(resources[i], &"set_baked_state", resources[i].get_baked_state())
		undo_redo.add_undo_method(resources[i], &"set_baked_state", before[i])
	undo_redo.commit_action(false)


# The inspector's bake saves a resource that has its own file, as the plain Bake button does.
func _save(resource: Resource) -> void:
	var path := resource.resource_path
	if not path.is_empty() and not path.contains("::"):
		resource.save_to(path)


func _toast(text: String, severity: int) -> void:
	if Engine.is_editor_hint():
		EditorInterface.get_editor_toaster().push_toast(text, severity)
