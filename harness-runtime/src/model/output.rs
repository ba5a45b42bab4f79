//! Which frame of a scripted stream carries the model's output (text, reasoning or a tool
//! call), so the stream's time to its first token is noted as it goes out: each API read as
//! `crate::stream_output` reads it, the one reader a cassette's recorded streams are timed by
//! too.

use super::recording::Api;
use crate::stream_output;

/// Whether a streamed frame of `api` (an SSE event, or an NDJSON line) carries model output.
pub(crate) fn frame_carries_output(api: Api, frame: &[u8]) -> bool {
    stream_output::frame_carries_output(frame, |event, data| match api {
        Api::OpenAi | Api::Ollama => stream_output::chat(data),
        Api::Anthropic => stream_output::anthropic(data),
        Api::Responses => stream_output::responses(event, data),
        Api::Gemini => stream_output::gemini(data),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_with_output_are_told_from_role_finish_and_usage_frames() {
        let with: [(Api, &[u8]); 6] = [
            (Api::OpenAi, b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"),
            (Api::Ollama, b"{\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n"),
            (Api::Responses, b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n"),
            (Api::Anthropic, b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"),
            (Api::Anthropic, b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"bash\",\"input\":{}}}\n\n"),
            (Api::Gemini, b"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hi\"}]}}]}\n\n"),
        ];
        for (api, frame) in with {
            assert!(
                frame_carries_output(api, frame),
                "{api:?} {}",
                String::from_utf8_lossy(frame)
            );
        }
        let without: [(Api, &[u8]); 9] = [
            (Api::OpenAi, b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"),
            (Api::OpenAi, b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\n\n"),
            (Api::OpenAi, b"data: [DONE]\n\n"),
            (Api::Ollama, b"{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true}\n"),
            (Api::Responses, b"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n"),
            (Api::Anthropic, b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n"),
            (Api::Anthropic, b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"),
            (Api::Anthropic, b"event: ping\ndata: {\"type\":\"ping\"}\n\n"),
            (Api::Gemini, b"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[]},\"finishReason\":\"STOP\"}]}\n\n"),
        ];
        for (api, frame) in without {
            assert!(
                !frame_carries_output(api, frame),
                "{api:?} {}",
                String::from_utf8_lossy(frame)
            );
        }
    }
}
