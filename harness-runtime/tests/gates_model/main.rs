//! Gates (client, wire and product points, the primitives under them) and the scripted model
//! (its protocol, the shapes clients send, script errors): one test binary, a module per former
//! binary, so the tests link once.

mod gates_points;
mod gates_primitives;
mod gates_wire;
mod model_client_shapes;
mod model_protocol;
mod model_script_errors;
