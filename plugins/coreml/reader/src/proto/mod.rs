//! Core ML's model specification at wire level: the generated field table ([`schema`], from
//! coremltools 9.0's descriptors), the dialect the kit's wire walk reports it in ([`DIALECT`]),
//! and the look at one message's own fields that the reader's roles are decided by
//! ([`shallow`]).

pub mod schema;
pub mod shallow;

use socair_plugin_kit::protobuf::walk::Dialect;

/// How the kit's wire walk names Core ML's schema.
///
/// `overhead_factor` 16: this reader decodes nothing into structs (its schema's sizes are 0);
/// the walk's budget then counts only text and scalar values, at most 16 bytes per byte of
/// input (a one-byte packed varint), so it never refuses a file for its cost, and what the
/// reader holds is bounded by its own lists (tensors, findings), not by the walk.
pub const DIALECT: Dialect = Dialect {
    messages: schema::MESSAGES,
    schema: "Core ML's model specification",
    versioned: "coremltools 9.0's model specification",
    undefined_kind: "fields coremltools 9.0's specification does not define",
    root: "model",
    overhead_factor: 16,
};

#[cfg(test)]
mod tests {
    use super::schema::{MESSAGES, MODEL, ONEOFS};
    use socair_plugin_kit::protobuf::schema::Kind;

    #[test]
    fn the_table_is_sorted_and_each_message_has_its_oneofs() {
        assert_eq!(MESSAGES.len(), ONEOFS.len());
        for m in MESSAGES {
            assert!(
                m.fields.windows(2).all(|w| w[0].number < w[1].number),
                "{}",
                m.name
            );
            for f in m.fields {
                if let Kind::Message(i) = f.kind {
                    assert!(i < MESSAGES.len());
                }
            }
        }
        assert_eq!(MESSAGES[MODEL].name, "Model");
        assert_eq!(
            MESSAGES[MODEL].field(1).map(|f| f.name),
            Some("specificationVersion")
        );
        // The model's type is one oneof of 39 members, from pipelineClassifier (200) on.
        assert_eq!(ONEOFS[MODEL].len(), 1);
        assert_eq!(ONEOFS[MODEL][0].first(), Some(&200));
    }
}
