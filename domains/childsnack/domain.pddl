;; Childsnack (nextstate shipped domain; the IPC 2014 domain as the IPC 2023
;; Learning Track has it: no :equality, a tray moves only to another place).
;;
;; Sandwiches are made in the kitchen from a bread and a content portion
;; (gluten-free when both are), put on trays, carried to the tables and
;; served to the waiting children; a child allergic to gluten only takes a
;; gluten-free sandwich.  Problems name the domain `childsnack`.

(define (domain childsnack)
  (:requirements :typing :negative-preconditions)

  (:types child bread-portion content-portion sandwich tray place)

  (:constants kitchen - place)

  (:predicates
    (at_kitchen_bread ?b - bread-portion)
    (at_kitchen_content ?c - content-portion)
    (at_kitchen_sandwich ?s - sandwich)
    (no_gluten_bread ?b - bread-portion)       ; static
    (no_gluten_content ?c - content-portion)   ; static
    (ontray ?s - sandwich ?t - tray)
    (no_gluten_sandwich ?s - sandwich)
    (allergic_gluten ?c - child)               ; static
    (not_allergic_gluten ?c - child)           ; static
    (served ?c - child)
    (waiting ?c - child ?p - place)            ; static
    (at ?t - tray ?p - place)
    (notexist ?s - sandwich))                  ; ?s is not made yet

  ;; A gluten-free sandwich from gluten-free bread and content.
  (:action make_sandwich_no_gluten
    :parameters (?s - sandwich ?b - bread-portion ?c - content-portion)
    :precondition (and (at_kitchen_bread ?b) (at_kitchen_content ?c)
                       (no_gluten_bread ?b) (no_gluten_content ?c) (notexist ?s))
    :effect (and (not (at_kitchen_bread ?b)) (not (at_kitchen_content ?c))
                 (at_kitchen_sandwich ?s) (no_gluten_sandwich ?s) (not (notexist ?s))))

  ;; A sandwich from any bread and content.
  (:action make_sandwich
    :parameters (?s - sandwich ?b - bread-portion ?c - content-portion)
    :precondition (and (at_kitchen_bread ?b) (at_kitchen_content ?c) (notexist ?s))
    :effect (and (not (at_kitchen_bread ?b)) (not (at_kitchen_content ?c))
                 (at_kitchen_sandwich ?s) (not (notexist ?s))))

  ;; A sandwich in the kitchen goes on a tray in the kitchen.
  (:action put_on_tray
    :parameters (?s - sandwich ?t - tray)
    :precondition (and (at_kitchen_sandwich ?s) (at ?t kitchen))
    :effect (and (not (at_kitchen_sandwich ?s)) (ontray ?s ?t)))

  ;; An allergic child waiting where the tray is gets a gluten-free sandwich.
  (:action serve_sandwich_no_gluten
    :parameters (?s - sandwich ?c - child ?t - tray ?p - place)
    :precondition (and (allergic_gluten ?c) (ontray ?s ?t) (waiting ?c ?p)
                       (no_gluten_sandwich ?s) (at ?t ?p))
    :effect (and (not (ontray ?s ?t)) (served ?c)))

  ;; A child who is not allergic gets any sandwich.
  (:action serve_sandwich
    :parameters (?s - sandwich ?c - child ?t - tray ?p - place)
    :precondition (and (not_allergic_gluten ?c) (waiting ?c ?p) (ontray ?s ?t) (at ?t ?p))
    :effect (and (not (ontray ?s ?t)) (served ?c)))

  ;; A tray moves to another place.
  (:action move_tray
    :parameters (?t - tray ?p1 ?p2 - place)
    :precondition (and (at ?t ?p1) (not (at ?t ?p2)))
    :effect (and (not (at ?t ?p1)) (at ?t ?p2))))
