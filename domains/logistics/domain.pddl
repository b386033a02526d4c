;; Logistics, typed STRIPS version (nextstate shipped domain).
;;
;; Packages travel between locations: trucks drive between locations of one
;; city, airplanes fly between airports (airports are locations too).
;; Problems name the domain `logistics-strips`.  Types, predicates and
;; actions follow the ACPBench reference order.

(define (domain logistics-strips)
  (:requirements :strips :typing)

  (:types
    location locatable city - object
    package movable - locatable
    airport - location
    airplane truck - movable)

  (:predicates
    (at ?obj - locatable ?loc - location)       ; ?obj stands at ?loc
    (in ?obj1 - package ?obj2 - movable)        ; package ?obj1 is inside vehicle ?obj2
    (in-city ?obj - location ?city - city))     ; static: ?obj belongs to ?city

  (:action load-truck
    :parameters (?obj - package ?truck - truck ?loc - location)
    :precondition (and (at ?truck ?loc) (at ?obj ?loc))
    :effect (and (in ?obj ?truck) (not (at ?obj ?loc))))

  (:action load-airplane
    :parameters (?obj - package ?airplane - airplane ?loc - location)
    :precondition (and (at ?obj ?loc) (at ?airplane ?loc))
    :effect (and (in ?obj ?airplane) (not (at ?obj ?loc))))

  (:action unload-truck
    :parameters (?obj - package ?truck - truck ?loc - location)
    :precondition (and (at ?truck ?loc) (in ?obj ?truck))
    :effect (and (at ?obj ?loc) (not (in ?obj ?truck))))

  (:action unload-airplane
    :parameters (?obj - package ?airplane - airplane ?loc - location)
    :precondition (and (in ?obj ?airplane) (at ?airplane ?loc))
    :effect (and (at ?obj ?loc) (not (in ?obj ?airplane))))

  ;; Trucks stay inside their city.
  (:action drive-truck
    :parameters (?truck - truck ?loc-from - location ?loc-to - location ?city - city)
    :precondition (and (at ?truck ?loc-from)
                       (in-city ?loc-from ?city) (in-city ?loc-to ?city))
    :effect (and (at ?truck ?loc-to) (not (at ?truck ?loc-from))))

  ;; Airplanes connect any two airports.
  (:action fly-airplane
    :parameters (?airplane - airplane ?loc-from - airport ?loc-to - airport)
    :precondition (at ?airplane ?loc-from)
    :effect (and (at ?airplane ?loc-to) (not (at ?airplane ?loc-from))))
)
