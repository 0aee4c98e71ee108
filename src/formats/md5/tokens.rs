//! The tokenizer: MD5 text as words, quoted strings and brackets, each with where it is (line and
//! byte offset) for errors; comments and whitespace skipped.

use crate::formats::FormatError;
use std::fmt;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum TokenKind<'a> {
    /// A keyword or a number: anything up to whitespace, a bracket, a quote or a comment.
    Word(&'a str),
    /// The text between double quotes, which never spans lines.
    Quoted(&'a str),
    OpenParen,
    CloseParen,
    OpenBrace,
    CloseBrace,
    End,
}

impl fmt::Display for TokenKind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Word(word) => write!(f, "'{word}'"),
            TokenKind::Quoted(text) => write!(f, "\"{text}\""),
            TokenKind::OpenParen => f.write_str("'('"),
            TokenKind::CloseParen => f.write_str("')'"),
            TokenKind::OpenBrace => f.write_str("'{'"),
            TokenKind::CloseBrace => f.write_str("'}'"),
            TokenKind::End => f.write_str("end of file"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Token<'a> {
    pub(super) kind: TokenKind<'a>,
    /// 1-based. For [`TokenKind::End`], the line of the last token, so a truncated file's error
    /// points at where its text stops rather than past it.
    pub(super) line: usize,
}

#[derive(Clone)]
pub(super) struct Tokenizer<'a> {
    rest: &'a str,
    line: usize,
    pub(super) last_token_line: usize,
    path: &'a Path,
}

impl<'a> Tokenizer<'a> {
    pub(super) fn new(text: &'a str, path: &'a Path) -> Tokenizer<'a> {
        // A UTF-8 byte-order mark (some Windows editors write one) is not part of the first token.
        let rest = text.strip_prefix('\u{feff}').unwrap_or(text);
        Tokenizer { rest, line: 1, last_token_line: 1, path }
    }

    pub(super) fn advance(&mut self, bytes: usize) {
        self.rest = self.rest.get(bytes..).unwrap_or_default();
    }

    pub(super) fn token(&mut self, kind: TokenKind<'a>) -> Token<'a> {
        self.last_token_line = self.line;
        Token { kind, line: self.line }
    }

    /// Skips what is left of the current line (its line end is still counted).
    pub(super) fn skip_line(&mut self) {
        let end = self.rest.find('\n').unwrap_or(self.rest.len());
        self.advance(end);
    }

    pub(super) fn next(&mut self) -> Result<Token<'a>, FormatError> {
        loop {
            let Some(first) = self.rest.chars().next() else {
                return Ok(Token { kind: TokenKind::End, line: self.last_token_line });
            };
            let bracket = match first {
                '(' => Some(TokenKind::OpenParen),
                ')' => Some(TokenKind::CloseParen),
                '{' => Some(TokenKind::OpenBrace),
                '}' => Some(TokenKind::CloseBrace),
                _ => None,
            };
            if let Some(kind) = bracket {
                self.advance(1);
                return Ok(self.token(kind));
            }
            if first == '\n' {
                self.line += 1;
                self.advance(1);
                continue;
            }
            // Also takes the '\r' of CRLF line ends.
            if first.is_whitespace() {
                self.advance(first.len_utf8());
                continue;
            }
            if self.rest.starts_with("//") {
                let comment_length = self.rest.find('\n').unwrap_or(self.rest.len());
                self.advance(comment_length);
                continue;
            }
            if first == '"' {
                let body = self.rest.get(1..).unwrap_or_default();
                let end = body.find(['"', '\n']);
                let closed = end.and_then(|end| body.get(end..)).is_some_and(|tail| tail.starts_with('"'));
                return match end {
                    Some(end) if closed => {
                        let text = body.get(..end).unwrap_or_default();
                        let token = self.token(TokenKind::Quoted(text));
                        self.advance(end + 2);
                        Ok(token)
                    }
                    _ => Err(FormatError::at_line(
                        self.path,
                        self.line,
                        "expected a closing '\"' before the end of the line, found none",
                    )),
                };
            }
            let word_end = self
                .rest
                .find(|character: char| character.is_whitespace() || matches!(character, '(' | ')' | '{' | '}' | '"'))
                .unwrap_or(self.rest.len());
            let mut word = self.rest.get(..word_end).unwrap_or_default();
            if let Some(comment) = word.find("//") {
                word = word.get(..comment).unwrap_or_default();
            }
            if word.is_empty() {
                // Unreachable by the checks above; guards against looping forever if they change.
                self.advance(first.len_utf8());
                continue;
            }
            self.advance(word.len());
            return Ok(self.token(TokenKind::Word(word)));
        }
    }
}
