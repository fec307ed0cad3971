# vat_crowd editor plugin. The classes come from the GDExtension; the plugin adds the editor side:
# the inspector's clip picker and Bake panel (a bake in steps with progress, Cancel and undo, run
# by bake_runner.gd), and a toast with the bake summary when a baker finishes.
@tool
extends EditorPlugin

const BakeRunner := preload("bake_runner.gd")
const InspectorPlugin := preload("inspector_plugin.gd")

var _runner: Node
var _inspector: EditorInspectorPlugin


func _enter_tree() -> void:
	get_tree().node_added.connect(_on_node_added)
	_runner = BakeRunner.new()
	_runner.name = "VatCrowdBakeRunner"
	_runner.undo_redo = get_undo_redo()
	add_child(_runner)
	_inspector = InspectorPlugin.new(_runner)
	add_inspector_plugin(_inspector)


func _exit_tree() -> void:
	if get_tree().node_added.is_connected(_on_node_added):
		get_tree().node_added.disconnect(_on_node_added)
	remove_inspector_plugin(_inspector)
	_runner.cancel()
	_runner.queue_free()


func _on_node_added(node: Node) -> void:
	if node.is_class("VertexAnimationBaker") and not node.is_connected("bake_finished", _on_bake_finished):
		node.connect("bake_finished", _on_bake_finished)


func _on_bake_finished(error: int, summary: String) -> void:
	var severity := EditorToaster.SEVERITY_ERROR
	if error == OK or error == ERR_SKIP:
		severity = EditorToaster.SEVERITY_INFO
	EditorInterface.get_editor_toaster().push_toast("vat_crowd: " + summary.get_slice("\n", 0), severity)
