//! socair plugin `native`: the native model files of gradient-boosting and JAX libraries,
//! read strictly as data by [`socair_native`] (XGBoost's JSON and UBJSON models, LightGBM's
//! text models, Flax's msgpack state dicts; the library the pickle profiles share for the
//! models a pickled Booster holds). This file is the plugin's declaration (`export_plugin!`,
//! every entry point inside `guard`) and the readers that hand a file's bytes to the library;
//! [`opened`] turns what was read into what the plugin API reports.

pub mod opened;

use socair_native::{flax, lightgbm, xgboost};

use socair_plugin_api::{ByteSourceRef, OpenedFile, PluginError, ReadOptions};
use socair_plugin_kit::export::{read_prefix, Reader};

socair_plugin_kit::export_plugin! {
    name: "native",
    rule_sets: [],
    readers: [XgboostJsonReader, XgboostUbjReader, LightgbmReader, FlaxReader],
    writers: [],
    encoders: [],
}

/// The whole file when it is at most `max` bytes, else a refusal naming the limit.
fn whole(
    source: &ByteSourceRef<'_>,
    format: &'static str,
    max: u64,
) -> Result<Result<Vec<u8>, OpenedFile>, PluginError> {
    let len = source.file_len();
    if len > max {
        let mut o = socair_native::model_read::ModelRead::new(format);
        o.what = socair_plugin_kit::report::PAST_BOUNDS.into();
        o.lead(
            "file",
            format!("the file is {len} bytes; socair reads {format} files of at most {max} bytes"),
        );
        return Ok(Err(opened::opened_file(o)));
    }
    Ok(Ok(read_prefix(source, len)?))
}

macro_rules! reader {
    ($name:ident, $doc:literal, $format:expr, $detect:expr, $read:expr, $max:expr) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy)]
        pub struct $name;

        impl Reader for $name {
            fn format(&self) -> &'static str {
                $format
            }

            fn detect(&self, head: &[u8], _file_len: u64) -> bool {
                $detect(head)
            }

            fn open(
                &self,
                source: &ByteSourceRef<'_>,
                _options: &ReadOptions,
            ) -> Result<OpenedFile, PluginError> {
                Ok(match whole(source, $format, $max)? {
                    Ok(data) => opened::opened_file($read(&data)),
                    Err(refused) => refused,
                })
            }
        }
    };
}

reader!(
    XgboostJsonReader,
    "XGBoost's JSON model (`Booster.save_model(\"m.json\")`).",
    xgboost::JSON_FORMAT,
    xgboost::looks_like_json,
    xgboost::read_json,
    xgboost::MAX_FILE
);
reader!(
    XgboostUbjReader,
    "XGBoost's UBJSON model (`Booster.save_model(\"m.ubj\")`).",
    xgboost::UBJ_FORMAT,
    xgboost::looks_like_ubj,
    xgboost::read_ubj,
    xgboost::MAX_FILE
);
reader!(
    LightgbmReader,
    "LightGBM's text model (`Booster.save_model`, `model_to_string`).",
    lightgbm::FORMAT,
    lightgbm::looks_like_model,
    lightgbm::read,
    lightgbm::MAX_FILE
);
reader!(
    FlaxReader,
    "Flax's msgpack state dict (`flax.serialization.to_bytes`).",
    flax::FORMAT,
    flax::looks_like_state,
    flax::read,
    flax::MAX_FILE
);
