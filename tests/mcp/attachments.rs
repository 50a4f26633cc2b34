//! Attachments over MCP, our server to our client on loopback: a tool's images, audio and
//! documents go out as `image`, `audio` and `resource` blocks after the text, and an import
//! hands them back as the same attachments, each described in the text the model reads. (The
//! conformance suite checks the served blocks with the official TypeScript client.)

use agent_toolkit::mcp::McpImport;
use agent_toolkit::mcp::McpTarget;
use agent_toolkit::prelude::*;
use agent_toolkit::tool::Attachment;
use serde_json::json;

/// The screen, as a picture, a sound, its caption and a PDF.
#[tool(read_only)]
fn screen() -> ToolOutput {
    ToolOutput::text("the screen")
        .with_attachment(Attachment::image([137u8, 80, 78, 71], "image/png"))
        .with_attachment(Attachment::audio([82u8, 73, 70, 70], "audio/wav"))
        .with_attachment(Attachment::text(
            "mem://caption",
            "text/markdown",
            "# Screen",
        ))
        .with_attachment(Attachment::blob(
            "mem://print",
            "application/pdf",
            [37u8, 80],
        ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attachments_cross_mcp_whole_and_in_order() {
    let served = Toolkit::builder().register(Screen).build().unwrap();
    let url = crate::serve_http(&served).await;
    let import = McpImport::connect(McpTarget::url(&url), "remote")
        .await
        .unwrap();
    let toolkit = Toolkit::builder()
        .group("remote", "the served tools")
        .dynamic("remote", import.tools())
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let local = served
        .call(ToolCall::json("1", "screen", json!({})), &ctx)
        .await;
    let remote = toolkit
        .call(ToolCall::json("2", "remote__screen", json!({})), &ctx)
        .await;
    let (local, remote) = (local.output().unwrap(), remote.output().unwrap());
    assert_eq!(remote.attachments(), local.attachments());
    assert_eq!(remote.attachments().len(), 4);
    assert_eq!(
        remote.as_text(),
        "the screen\n[image: image/png]\n[audio: audio/wav]\n# Screen\n\
         [resource: mem://print (application/pdf)]"
    );
}
