use harness_runtime::gates::{Point, WirePoint};
use harness_runtime::{Live, live_agent_test};

#[live_agent_test(
    agent = "fixture",
    gate = [
        "abort",
        "request POST /session/{id}/abort",
        "response POST /permission/{requestID}/reply",
        "event permission.asked",
        "product before_save",
    ],
)]
async fn every_form(live: &mut Live) {
    let abort = WirePoint::parse("request POST /session/{id}/abort").unwrap();
    assert!(live.gates().gate(&abort).is_some());
    assert!(
        live.gates()
            .gate(Point::product("before_save").unwrap())
            .is_some()
    );
}

#[test]
fn every_gate_form_expands_and_the_function_stays_callable() {
    let _ = every_form;
}
